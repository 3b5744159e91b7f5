"""axe-core over every chapter page of the zh-CN and ja editions at 1280 px, and
their tensors chapter in dark mode (axe_scan)."""
from axe_scan import axe_tests

(violations, test_no_serious_accessibility_violation, test_every_exemption_is_still_needed,
 test_dark_mode_keeps_contrast_and_plots_on_a_light_card) = axe_tests(["zh-CN", "ja"])
