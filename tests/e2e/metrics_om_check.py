#!/usr/bin/python3
# metrics_om_check.py FILE — parses FILE with the OpenMetrics parser of Debian's
# python3-prometheus-client (strict: families, types, units, # EOF) and prints one line per
# family, "NAME TYPE SAMPLES". Exit status 1, with the parser's message, if it rejects FILE.
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

try:
    # newline="": the text as served (a CR inside a label value is valid OpenMetrics; universal
    # newlines would make it a line break)
    with open(sys.argv[1], encoding="utf-8", newline="") as f:
        for family in text_string_to_metric_families(f.read()):
            print(family.name, family.type, len(family.samples))
except Exception as e:  # the parser raises ValueError (and others) for what it rejects
    print(f"rejected: {e}", file=sys.stderr)
    sys.exit(1)
