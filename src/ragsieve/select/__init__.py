"""Context selection: which scored chunks go to the LLM, in which order."""

from ragsieve.select.base import BudgetSelector, Selection, Selector, TopKSelector
from ragsieve.select.gradient import GradientCutSelector

__all__ = ["BudgetSelector", "GradientCutSelector", "Selection", "Selector", "TopKSelector"]
