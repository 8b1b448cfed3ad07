# A Python step with pandas (Debian's python3-pandas, imported in the jail):
# 10,000 sales grouped by region: stepbox run examples/pandas.py prints
# {"east":{"total":9998,"n":3333},"north":{"total":9999,"n":3334},"south":{"total":9997,"n":3333}}
import pandas as pd

regions = ["north", "south", "east"]
df = pd.DataFrame({"region": [regions[i % 3] for i in range(10_000)], "amount": [i % 7 for i in range(10_000)]})
totals = df.groupby("region")["amount"].agg(["sum", "count"])
return {region: {"total": int(row["sum"]), "n": int(row["count"])} for region, row in totals.iterrows()}
