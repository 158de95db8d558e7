print("rampart")
