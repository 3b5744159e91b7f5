/* The book's own page behaviour (loaded on every page; see booktools/ext/site_assets.py).
 *
 * 1. Sidebar buttons. pydata-sphinx-theme 0.17 binds its "open the navigation
 *    drawer" and "open the page contents" handlers to the FIRST .primary-toggle
 *    and .secondary-toggle of the page (pydata-sphinx-theme issue 2451), which
 *    sphinx-book-theme hides in #pst-header; the visible copies in the article
 *    header did nothing. Each other copy now passes its click on to the bound
 *    one, so the theme's own code (drawer below 992 px, collapse above) runs.
 * 2. Dropdown titles. sphinx-togglebutton 0.4.5 guesses the toggle button from
 *    the element clicked and keeps it in an undeclared global: a click on a
 *    link or inline code in a title threw "button is not defined" or toggled
 *    the dropdown clicked before. Clicks in a dropdown's title are handled here
 *    first (capture phase): the title's own button toggles its own dropdown,
 *    and a link in a title is just followed.
 * 3. Tables on a phone: each body cell gets its column's header as a label
 *    (data-label), so that book.css can show each row as a small card on a
 *    narrow screen instead of squeezing columns or hiding them to the right.
 * 4. Printing opens every <details> (hidden cells, dropdowns) and closes the
 *    ones it opened afterwards; book.css does the same for print media in
 *    browsers with ::details-content, and sphinx-togglebutton opens its own
 *    dropdown admonitions.
 */
(function () {
  "use strict";

  function forwardSidebarToggles() {
    [".primary-toggle", ".secondary-toggle"].forEach(function (selector) {
      var copies = document.querySelectorAll(selector);
      var bound = copies[0];
      for (var i = 1; i < copies.length; i++) {
        copies[i].addEventListener("click", function (event) {
          event.preventDefault();
          event.stopPropagation();
          bound.click();
        });
      }
    });
  }

  function labelTableCells() {
    document.querySelectorAll("article table.table").forEach(function (table) {
      var heads = table.querySelectorAll("thead tr:last-child th");
      if (heads.length < 2) return;
      table.querySelectorAll("tbody tr").forEach(function (row) {
        Array.prototype.forEach.call(row.children, function (cell, i) {
          if (heads[i]) cell.dataset.label = heads[i].textContent.trim();
        });
      });
      table.classList.add("book-reflow");
    });
  }

  function onDropdownTitleClick(event) {
    var target = event.target;
    if (!target || !target.closest) return;
    var title = target.closest(".admonition.toggle > .admonition-title");
    if (!title) return;
    var button = title.querySelector(":scope > .toggle-button");
    if (!button || typeof window.toggleHidden !== "function") return;
    event.stopPropagation(); // sphinx-togglebutton's own title handler never runs
    if (target.closest("a[href]")) return; // a link in a title goes where it points
    window.toggleHidden(button);
  }

  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (details) {
      details.dataset.bookOpenedForPrint = "true";
      details.open = true;
    });
  });
  window.addEventListener("afterprint", function () {
    document.querySelectorAll("details[data-book-opened-for-print]").forEach(function (details) {
      delete details.dataset.bookOpenedForPrint;
      details.open = false;
    });
  });

  document.addEventListener("click", onDropdownTitleClick, true);
  function whenReady() {
    forwardSidebarToggles();
    labelTableCells();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", whenReady);
  } else {
    whenReady();
  }
})();
