// Console keyboard shortcuts. j/k move through a queue's rows, Enter opens the
// selected one, a approves, r rejects (focusing the reason first), ? shows help.
// Buttons opt in with data-shortcut; everything also works with the mouse.
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
      Enter: () => {
        const row = document.querySelector("[data-row].selected .row-link");
        if (row) row.click();
      },
      r: reject,
    };
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

  // A button with data-opens="<dialog id>" opens that dialog (no inline handlers:
  // the Content-Security-Policy refuses them).
  document.addEventListener("click", (event) => {
    const opener = event.target instanceof Element && event.target.closest("[data-opens]");
    if (!opener) return;
    const dialog = document.getElementById(opener.dataset.opens);
    if (dialog instanceof HTMLDialogElement) dialog.showModal();
  });

  // After a decision the workspace is replaced: put focus on the next item.
  document.body.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target && event.detail.target.id === "workspace") {
      const selected = document.querySelector("[data-row].selected") || rows()[0];
      if (selected) select(selected);
    }
  });

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
