"""accord.contracts"""
