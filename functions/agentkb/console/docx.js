// DOCX paragraphs as text: the ZIP's central directory -> word/document.xml, inflated with the browser's own
// DecompressionStream, then one line per w:p (headings styled Heading N become Markdown headings).

function entry(bytes, wanted) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = bytes.length - 22;
  while (end >= 0 && view.getUint32(end, true) !== 0x06054b50) end -= 1;
  if (end < 0) throw new Error('not a DOCX (no ZIP directory)');
  let at = view.getUint32(end + 16, true);
  const count = view.getUint16(end + 10, true);
  const decoder = new TextDecoder();
  for (let i = 0; i < count; i += 1) {
    const method = view.getUint16(at + 10, true);
    const size = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const skip = nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    const name = decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    const local = view.getUint32(at + 42, true);
    if (name === wanted) {
      const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
      return { method, data: bytes.subarray(start, start + size) };
    }
    at += 46 + skip;
  }
  throw new Error('not a DOCX (no word/document.xml)');
}

async function inflate({ method, data }) {
  if (method === 0) return new TextDecoder().decode(data);
  if (method !== 8) throw new Error('DOCX compressed with an unknown method');
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  return new Response(stream).text();
}

export async function docxText(buffer) {
  const xml = await inflate(entry(new Uint8Array(buffer), 'word/document.xml'));
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  const lines = [];
  for (const p of doc.getElementsByTagNameNS(W, 'p')) {
    const text = [...p.getElementsByTagNameNS(W, 't')].map((t) => t.textContent).join('').trim();
    if (!text) continue;
    const style = p.getElementsByTagNameNS(W, 'pStyle')[0];
    const level = style && /^Heading([1-6])$/i.exec(style.getAttributeNS(W, 'val') || '');
    lines.push(level ? `${'#'.repeat(Number(level[1]))} ${text}` : text);
  }
  return lines.join('\n\n');
}
