print("folder depmod imported", flush=True)
