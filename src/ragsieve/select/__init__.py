"""Context selection: which scored chunks go to the LLM, in which order."""

from ragsieve.select.base import BudgetSelector, Selection, Selector, TopKSelector

__all__ = ["BudgetSelector", "Selection", "Selector", "TopKSelector"]
