"""solgate's stand-in for the Tacker modules that VNF package scripts import (see docs/lcm.md)."""
