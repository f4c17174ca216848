"""Gradient checks of a backward operator against finite differences of its forward."""
