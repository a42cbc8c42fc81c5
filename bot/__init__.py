"""gpu-advisor: which cloud GPU instance to rent for a deep-learning job, and why."""
__version__ = "0.1.0"
