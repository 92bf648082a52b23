// Measures a liedar report page loaded in the iframe #report (run by scripts/render_report_html.py --check).
// Lives in the wrapper page only: the report itself stays script-free.
function lum(c) {
  const m = c.match(/[\d.]+/g).map(Number);
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return { l: 0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]), a: m.length > 3 ? m[3] : 1 };
}
// the first opaque background colour up the tree (the page's white when none)
function bg(w, el) {
  for (let e = el; e; e = e.parentElement) {
    const c = w.getComputedStyle(e).backgroundColor;
    if (lum(c).a > 0.99) return c;
  }
  return "rgb(255, 255, 255)";
}
// elements reaching past the viewport that no scrolling box of their own contains
function overflow(d, w) {
  const vw = w.innerWidth, bad = [];
  for (const el of d.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= vw + 1) continue;
    let clipped = false;
    for (let p = el.parentElement; p && p !== d.body; p = p.parentElement) {
      const ox = w.getComputedStyle(p).overflowX;
      if (ox === "auto" || ox === "scroll" || ox === "hidden") { clipped = true; break; }
    }
    if (!clipped) bad.push(el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + " right=" + Math.round(r.right));
  }
  const sw = d.documentElement.scrollWidth;
  return { viewport: vw, scroll_width: sw, page_scrolls: sw > vw, offenders: bad.slice(0, 20), tables: d.querySelectorAll("table").length };
}
// WCAG 2 contrast of every element that holds text of its own
function contrast(d, w) {
  const out = [];
  let n = 0;
  for (const el of d.body.querySelectorAll("*")) {
    if (![...el.childNodes].some((x) => x.nodeType === 3 && x.textContent.trim())) continue;
    const s = w.getComputedStyle(el);
    if (s.display === "none" || s.visibility === "hidden") continue;
    n++;
    const back = bg(w, el), f = lum(s.color), b = lum(back);
    const ratio = (Math.max(f.l, b.l) + 0.05) / (Math.min(f.l, b.l) + 0.05);
    const px = parseFloat(s.fontSize), bold = parseInt(s.fontWeight) >= 700;
    const need = px >= 24 || (bold && px >= 18.66) ? 3.0 : 4.5;
    if (ratio < need) {
      out.push({ tag: el.tagName.toLowerCase(), cls: el.className, text: el.textContent.trim().slice(0, 60),
                 color: s.color, background: back, ratio: Math.round(ratio * 100) / 100, need: need });
    }
  }
  return { elements: n, failures: out.slice(0, 30), n_failures: out.length };
}
window.addEventListener("load", () => {
  const f = document.getElementById("report"), d = f.contentDocument, w = f.contentWindow;
  const res = { collapsed: overflow(d, w) };
  for (const x of d.querySelectorAll("details")) x.open = true;
  res.expanded = overflow(d, w);
  res.contrast = contrast(d, w);
  res.headings = [...d.querySelectorAll("h1,h2,h3,h4,h5,h6")].map((h) => [parseInt(h.tagName[1]), h.textContent.trim().slice(0, 80)]);
  res.external = [...d.querySelectorAll("[src],[href]")]
    .map((e) => e.getAttribute("src") || e.getAttribute("href"))
    .filter((u) => !u.startsWith("data:") && !u.startsWith("#"));
  res.scripts = d.querySelectorAll("script").length;
  res.details = d.querySelectorAll("details").length;
  res.height = d.documentElement.scrollHeight;
  const pre = document.createElement("pre");
  pre.id = "liedar-check";
  pre.textContent = JSON.stringify(res);
  document.body.appendChild(pre);
});
