"""Evidence producers: one pure, LLM-free analyzer per telemetry part, each returning pydantic findings.

logs (L4), flows (LLMPrism), stacks (ByteRobust), health probes.
"""
