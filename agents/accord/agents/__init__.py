"""accord.agents"""
