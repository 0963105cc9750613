// Keyboard shortcuts for the console. Pages opt in with data-shortcut attributes.
document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (target instanceof HTMLElement && target.closest("input, textarea, select, [contenteditable]")) return;
  if (event.metaKey || event.ctrlKey || event.altKey) return;
  const element = document.querySelector(`[data-shortcut="${CSS.escape(event.key)}"]`);
  if (element instanceof HTMLElement) {
    event.preventDefault();
    element.click();
    element.focus();
  }
});
