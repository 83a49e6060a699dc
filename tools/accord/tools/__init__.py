"""accord.tools"""
