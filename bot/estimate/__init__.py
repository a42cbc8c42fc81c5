"""Estimate: pure arithmetic for one job on one layout: memory per GPU term by term, compute time and cost."""
