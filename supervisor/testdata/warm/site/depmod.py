print("site depmod imported", flush=True)
