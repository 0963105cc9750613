// Console keyboard shortcuts. j/k move through a queue's rows, Enter opens the
// selected one, a approves, r rejects (focusing the reason first), u undoes the
// decision just taken (while its toast shows), ? shows help.
// Buttons opt in with data-shortcut; everything also works with the mouse.
// Shortcuts never fire while typing, and Enter on a focused link or button keeps
// its own meaning.
(() => {
  const typing = (el) =>
    el instanceof HTMLElement && el.closest("input, textarea, select, [contenteditable]");

  const rows = () => Array.from(document.querySelectorAll("[data-row]"));

  const select = (row) => {
    rows().forEach((r) => r.classList.toggle("selected", r === row));
    const link = row && row.querySelector(".row-link");
    if (link) link.focus();
  };

  const move = (step) => {
    const all = rows();
    if (!all.length) return;
    const current = all.findIndex((r) => r.classList.contains("selected"));
    const next = all[Math.max(0, Math.min(all.length - 1, current + step))] || all[0];
    select(next);
  };

  const reject = () => {
    const reason = document.getElementById("reason_code");
    const button = document.querySelector("[data-reject]");
    if (!reason || !button) return;
    if (!reason.value) {
      reason.focus();
      return;
    }
    button.click();
  };

  document.addEventListener("keydown", (event) => {
    if (typing(event.target) || event.metaKey || event.ctrlKey || event.altKey) return;
    const actions = {
      j: () => move(1),
      k: () => move(-1),
      r: reject,
    };
    if (event.key === "Enter") {
      // Only when nothing is focused: a focused link, button or control does its own thing.
      const focused = document.activeElement;
      if (focused && focused !== document.body) return;
      const row = document.querySelector("[data-row].selected .row-link");
      if (row) {
        event.preventDefault();
        row.click();
      }
      return;
    }
    if (actions[event.key]) {
      event.preventDefault();
      actions[event.key]();
      return;
    }
    const element = document.querySelector(`[data-shortcut="${CSS.escape(event.key)}"]`);
    if (element instanceof HTMLElement) {
      event.preventDefault();
      element.click();
    }
  });

  // Toasts: a close button each; good news leaves by itself, errors stay until closed.
  const dismissLater = () => {
    document.querySelectorAll(".toast:not(.error):not([data-timed])").forEach((toast) => {
      toast.dataset.timed = "1";
      setTimeout(() => toast.classList.add("hidden"), 8000);
    });
  };
  document.addEventListener("click", (event) => {
    const close = event.target instanceof Element && event.target.closest("[data-dismiss]");
    if (!close) return;
    const toast = close.closest(".toast");
    // A dismissed undo offer goes with its `u` shortcut; other toasts just hide.
    if (toast?.hasAttribute("data-undo-until")) toast.remove();
    else toast?.classList.add("hidden");
  });
  document.addEventListener("DOMContentLoaded", dismissLater);
  document.body.addEventListener("htmx:oobAfterSwap", dismissLater);

  // The undo toast counts down to the end of its window and then leaves, taking its
  // `u` shortcut with it. Only a display: the server refuses a late undo anyway.
  const countDown = () => {
    document.querySelectorAll("[data-undo-until]").forEach((toast) => {
      const left = Math.round((Date.parse(toast.dataset.undoUntil) - Date.now()) / 1000);
      if (left <= 0) {
        toast.remove();
        return;
      }
      const shown = toast.querySelector("[data-countdown]");
      if (shown) shown.textContent = `${left} s left`;
    });
  };
  setInterval(countDown, 1000);
  document.addEventListener("DOMContentLoaded", countDown);

  // A refused decision comes back with the field to fix marked: focus goes there,
  // so keyboard and screen-reader users land on the error, not at the top of the page.
  document.body.addEventListener("htmx:afterSettle", (event) => {
    if (!(event.detail.target instanceof Element) || event.detail.target.id !== "detail") return;
    const target = document.getElementById("detail");
    if (!target) return;
    const invalid = target.querySelector("[aria-invalid='true']") || target.querySelector("#decision-error");
    if (invalid instanceof HTMLElement) {
      invalid.focus();
      invalid.scrollIntoView({ block: "center" });
    }
  });

  // Saving filters keeps what the list shows now: htmx changed the address, not the form.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.matches(".save-filter")) return;
    const query = form.querySelector("input[name=query]");
    if (query instanceof HTMLInputElement) query.value = window.location.search.replace(/^\?/, "");
  });

  // A button with data-opens="<dialog id>" opens that dialog (no inline handlers:
  // the Content-Security-Policy refuses them).
  document.addEventListener("click", (event) => {
    const opener = event.target instanceof Element && event.target.closest("[data-opens]");
    if (!opener) return;
    const dialog = document.getElementById(opener.dataset.opens);
    if (dialog instanceof HTMLDialogElement) dialog.showModal();
  });

  // hx-confirm asks in the page's own <dialog> (#confirm-dialog in base.html): styled,
  // keyboard-accessible (focus starts on Cancel, Escape cancels) and free of inline code.
  // The element asking may name the accept button with data-confirm-action.
  document.body.addEventListener("htmx:confirm", (event) => {
    const question = event.detail.question;
    const dialog = document.getElementById("confirm-dialog");
    if (!question || !(dialog instanceof HTMLDialogElement)) return;
    event.preventDefault();
    const asking = event.detail.elt instanceof Element ? event.detail.elt.closest("[data-confirm-action]") : null;
    dialog.querySelector("[data-question]").textContent = question;
    dialog.querySelector("[data-accept]").textContent = asking?.dataset.confirmAction || "Confirm";
    dialog.returnValue = "";
    dialog.addEventListener(
      "close",
      () => {
        if (dialog.returnValue === "confirm") event.detail.issueRequest(true);
      },
      { once: true },
    );
    dialog.showModal();
  });

  // After a decision the workspace is replaced: put focus on the next item.
  document.body.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target && event.detail.target.id === "workspace") {
      const selected = document.querySelector("[data-row].selected") || rows()[0];
      if (selected) select(selected);
    }
  });

  // The sidebar's menu is open on a desktop and folded on a phone (the CSS breakpoint), so
  // a phone shows the page's content first; it follows the window across the breakpoint.
  const menu = document.querySelector("details[data-menu]");
  if (menu instanceof HTMLDetailsElement) {
    const narrow = window.matchMedia("(max-width: 760px)");
    const fit = () => {
      menu.open = !narrow.matches;
    };
    fit();
    narrow.addEventListener("change", fit);
  }

  // Ages past a queue's target turn amber, then red.
  const paintAges = () => {
    const now = Date.now() / 1000;
    document.querySelectorAll("time[data-age]").forEach((el) => {
      const age = now - Number(el.dataset.age);
      el.classList.toggle("age-warn", age > 86400 && age <= 3 * 86400);
      el.classList.toggle("age-late", age > 3 * 86400);
    });
  };
  document.addEventListener("DOMContentLoaded", paintAges);
  document.body.addEventListener("htmx:afterSettle", paintAges);
})();
