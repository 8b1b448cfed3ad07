# A Python step with pandas (Debian's python3-pandas, imported in the jail):
# 10,000 sales grouped by region.
import pandas as pd

regions = ["north", "south", "east"]
df = pd.DataFrame({"region": [regions[i % 3] for i in range(10_000)], "amount": [i % 7 for i in range(10_000)]})
totals = df.groupby("region")["amount"].agg(["sum", "count"])
return {region: {"total": int(row["sum"]), "n": int(row["count"])} for region, row in totals.iterrows()}
