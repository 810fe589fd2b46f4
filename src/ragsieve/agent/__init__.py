"""CARROT's configuration agent (Sec. VI): predicts, per query, the scorer and the MCTS
hyper-parameters from the query embedding and the mean embedding of its retrieved chunks."""

from ragsieve.agent.model import SCORERS, AgentModel
from ragsieve.agent.predict import AgentConfig, ConfigAgent

__all__ = ["SCORERS", "AgentConfig", "AgentModel", "ConfigAgent"]
