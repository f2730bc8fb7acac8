// The consoles' only script (src/surfaces/web/shell.ts loads it): every page works without it;
// it adds the copy buttons of values shown once (an API key, a client secret).
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy') ?? '');
  if (!source) return;
  try {
    await navigator.clipboard.writeText(source.textContent ?? '');
    button.textContent = button.getAttribute('data-copied') ?? 'Copied';
  } catch {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = window.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
  }
});
