"""axe-core over the translated editions at 1280 px: their tensors chapter in light and
dark mode, or with BOOK_AXE=all every chapter page (axe_scan)."""
from axe_scan import axe_tests
from booktools import i18n

(violations, test_no_serious_accessibility_violation, test_every_exemption_is_still_needed,
 test_dark_mode_keeps_contrast_and_plots_on_a_light_card) = axe_tests(
    [lang.code for lang in i18n.translations()])
