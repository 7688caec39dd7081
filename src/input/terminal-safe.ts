/**
 * Text read from outside (a lock file, a journal, a freeze record, HAProxy's answers) with every
 * control character written out as `\x1b`, so nothing read can drive the terminal it is printed
 * on (move the cursor, rewrite a line, retitle the window) or pass for something sluice printed.
 * Tabs and newlines stay: they lay text out and move nothing.
 */
export function escapeControls(text: string): string {
  // C0 controls but tab and newline, DEL, and the C1 controls (0x80-0x9f).
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** JSON.parse with every string in it made terminal-safe. */
export function parseJsonSafely(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) => (typeof value === 'string' ? escapeControls(value) : value))
}
