# A module of the strategy's folder: imported in a run, never in the template.
print("helper imported", flush=True)
