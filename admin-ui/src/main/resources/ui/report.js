// The report form's proof of work: find a nonce such that SHA-256(challenge + ":" + nonce) starts with
// the asked number of zero bits, then send the form. Needs crypto.subtle (HTTPS, or localhost).
(function () {
  const form = document.getElementById('report-form');
  if (!form) return;
  const challenge = document.getElementById('challenge');
  const status = document.getElementById('work-status');
  const zeroBits = (h) => {
    let bits = 0;
    for (const b of h) {
      if (b === 0) { bits += 8; continue; }
      return bits + Math.clz32(b) - 24;
    }
    return bits;
  };
  let solved = false;
  form.addEventListener('submit', async (event) => {
    if (solved) return;
    event.preventDefault();
    if (!window.crypto || !crypto.subtle) {
      status.textContent = 'This page needs HTTPS for its puzzle; please use the https:// address.';
      return;
    }
    document.getElementById('send-report').disabled = true;
    status.textContent = 'Solving the puzzle...';
    const bits = Number(challenge.dataset.difficulty);
    const text = new TextEncoder();
    const batch = 256; // digests in flight at once: a third of the time of one await per digest
    search: for (let base = 0; ; base += batch) {
      const hashes = await Promise.all(Array.from({length: batch}, (_, k) =>
        crypto.subtle.digest('SHA-256', text.encode(challenge.value + ':' + (base + k)))));
      for (let k = 0; k < batch; k++) {
        if (zeroBits(new Uint8Array(hashes[k])) >= bits) {
          document.getElementById('nonce').value = String(base + k);
          break search;
        }
      }
    }
    solved = true;
    status.textContent = 'Sending...';
    form.submit();
  });
})();
