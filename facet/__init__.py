"""facet: exact, fast detection of denial-constraint violations (FACET, PVLDB 2022).

>>> import facet
>>> res = facet.detect("data/tax/tax_dirty_0010k.csv", dcs=["zip -> city"])
>>> res.dcs[0].violations
"""

from facet.api import detect, explain, load_dcs
from facet.errors import DCSyntaxError, FacetError, FacetInputError
from facet.language import DC, parse_dc, parse_rules, read_rules
from facet.result import DCResult, Result

__version__ = "0.1.0"

__all__ = [
    "DC",
    "DCResult",
    "DCSyntaxError",
    "FacetError",
    "FacetInputError",
    "Result",
    "detect",
    "explain",
    "load_dcs",
    "parse_dc",
    "parse_rules",
    "read_rules",
]
