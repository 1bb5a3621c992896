"""diagagent: diagnoses failed, hung and slow distributed LLM training jobs from their telemetry.

Layers, imports pointing down only: telemetry <- analysis <- diagnosis <- agent <- apps.
"""

__version__ = "0.1.0"
