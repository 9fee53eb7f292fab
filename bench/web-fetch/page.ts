/**
 * A synthetic ~1 MB news page shaped like real ones: most bytes are inline
 * scripts (hydration state, analytics), styles and SVG icon sprites; then a
 * mega-menu, a long article (~60 KB of text with headings, lists, a table,
 * code and figures), a comments section, related-story rails and a footer.
 */

function words(n: number, seed: number): string {
  const vocab = ["council", "river", "energy", "budget", "residents", "project", "solar", "housing", "report", "market", "analysis", "growth", "policy", "data", "city", "plan", "vote", "cost", "public", "future"];
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(vocab[(i * 7 + seed * 13) % vocab.length]);
  return out.join(" ");
}

/** Build the page; `targetBytes` defaults to 1 MB. */
export function buildBenchPage(targetBytes = 1_000_000): string {
  const head: string[] = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Riverside solar farm: what the vote means | Harbor Gazette</title>"];
  head.push(`<style>${".c{color:#111;margin:0 auto;padding:4px}".repeat(2500)}</style>`);
  head.push(`<script type="application/ld+json">{"@type":"NewsArticle","headline":"Riverside solar farm: what the vote means","author":{"name":"Maria Okafor"}}</script>`);
  const nav: string[] = ["<header><nav class=\"mega-menu\"><ul>"];
  for (let i = 0; i < 300; i++) nav.push(`<li><a href="/section/${i}">Section ${i}</a><ul><li><a href="/section/${i}/a">Sub A</a></li><li><a href="/section/${i}/b">Sub B</a></li></ul></li>`);
  nav.push("</ul></nav></header>");
  const sprite = `<svg style="display:none">${Array.from({ length: 300 }, (_, i) => `<symbol id="i${i}" viewBox="0 0 24 24"><path d="M12 2l3 7h7l-5.5 4 2 7-6.5-4.5L5.5 20l2-7L2 9h7z"/></symbol>`).join("")}</svg>`;
  const article: string[] = ["<main><article><h1>Riverside solar farm: what the vote means</h1><p class=\"byline\">By Maria Okafor</p>"];
  for (let s = 0; s < 60; s++) {
    article.push(`<h2>Part ${s + 1}: ${words(4, s)}</h2>`);
    for (let p = 0; p < 4; p++) article.push(`<p>${words(45, s * 10 + p)} <a href="/story/${s}-${p}">read more</a>, <em>${words(5, p)}</em>.</p>`);
    if (s % 6 === 0) article.push(`<ul>${[1, 2, 3, 4].map((k) => `<li>${words(10, k + s)}</li>`).join("")}</ul>`);
    if (s % 10 === 0) article.push(`<table><tr><th>Year</th><th>MW</th><th>Cost</th></tr>${[2025, 2026, 2027].map((y) => `<tr><td>${y}</td><td>${s + y % 7}</td><td>$${s * 3}m</td></tr>`).join("")}</table>`);
    if (s % 15 === 0) article.push(`<pre><code class="language-python">capacity = ${s} * 1.5\nprint(capacity)</code></pre>`);
    if (s % 8 === 0) article.push(`<figure><img src="/img/${s}.jpg" alt="figure ${s}"><figcaption>${words(8, s)}</figcaption></figure>`);
  }
  article.push("</article>");
  const rails: string[] = ["<aside class=\"related\"><h3>Most read</h3><ul>"];
  for (let i = 0; i < 200; i++) rails.push(`<li><a href="/most-read/${i}"><img src="/thumb/${i}.jpg" alt="">${words(8, i)}</a></li>`);
  rails.push("</ul></aside><section class=\"comments\"><h3>Comments</h3>");
  for (let i = 0; i < 150; i++) rails.push(`<div class="comment"><span class="user">reader${i}</span><p>${words(25, i + 3)}</p><button>Reply</button></div>`);
  rails.push("</section></main><footer><ul>");
  for (let i = 0; i < 100; i++) rails.push(`<li><a href="/footer/${i}">Footer link ${i}</a></li>`);
  rails.push("</ul><p>© 2026 Harbor Gazette</p></footer>");
  const withoutState = head.join("") + "</head><body>" + sprite + nav.join("") + article.join("") + rails.join("");
  // Pad with hydration state and analytics bundles up to the target size, as large sites do.
  const pad = Math.max(0, targetBytes - withoutState.length - 100);
  const state = `<script>window.__STATE__=${JSON.stringify({ items: "x".repeat(Math.floor(pad / 2)) })}</script><script>${"function a(){return 1}".repeat(Math.floor(pad / 2 / 22))}</script>`;
  return withoutState + state + "</body></html>";
}
