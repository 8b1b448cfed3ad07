# Groups the input's sales by region with pandas (Debian's python3-pandas).
import pandas as pd

df = pd.DataFrame(input["rows"])
totals = df.groupby("region")["amount"].agg(["sum", "count"])
return {region: {"total": float(row["sum"]), "n": int(row["count"])} for region, row in totals.iterrows()}
