"""accord.protocol"""
