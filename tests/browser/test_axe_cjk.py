"""axe-core over every chapter page of the zh-CN and ja editions at 1280 px (axe_scan)."""
from axe_scan import axe_tests

violations, test_no_serious_accessibility_violation, test_every_exemption_is_still_needed = \
    axe_tests(["zh-CN", "ja"])
