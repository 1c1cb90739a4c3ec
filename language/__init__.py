"""The DC language (docs/semantics.md §5): the AST in :mod:`.ast`, the text parser in :mod:`.parser`."""

from .ast import DC, Col, Const, Predicate
from .parser import parse_dc, parse_rules, read_rules

__all__ = ["DC", "Col", "Const", "Predicate", "parse_dc", "parse_rules", "read_rules"]
