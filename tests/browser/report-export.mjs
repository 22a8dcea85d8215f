// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// report-export.mjs: opens `gaptrace report --format html` and the
// `gaptrace export` trace (in speedscope) in headless Chromium; fails on any
// console error, page error, network request off this machine, a blank
// timeline or a trace speedscope cannot nest; keeps screenshots.
// Usage: node report-export.mjs REPORT.html TRACE.json ARTIFACT_DIR [THREAD]
// (THREAD: the track speedscope shows in the screenshot, default gpu-worker)
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const [htmlPath, tracePath, artDir, showThread = 'gpu-worker'] = process.argv.slice(2);
if (!htmlPath || !tracePath || !artDir) {
  console.error('usage: node report-export.mjs REPORT.html TRACE.json ARTIFACT_DIR');
  process.exit(2);
}
const speedscopeDir = path.join(here, 'node_modules', 'speedscope', 'dist', 'release');
if (!fs.existsSync(path.join(speedscopeDir, 'index.html'))) {
  console.error(`report-export: ${speedscopeDir} missing: run 'npm ci' in tests/browser`);
  process.exit(1);
}
fs.mkdirSync(artDir, { recursive: true });

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2', '.wasm': 'application/wasm', '.txt': 'text/plain' };

// A tiny loopback server: speedscope fetches #profileURL, which file:// forbids.
function serve(file, res) {
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
}
const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split(/[?#]/)[0]);
  if (url === '/report.html') return serve(htmlPath, res);
  if (url === '/trace.json') return serve(tracePath, res);
  if (url.startsWith('/speedscope/')) {
    const f = path.normalize(path.join(speedscopeDir, url.slice('/speedscope/'.length)));
    if (!f.startsWith(speedscopeDir)) { res.writeHead(403); res.end(); return; }
    return serve(f, res);
  }
  res.writeHead(404);
  res.end();
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gaptrace-chromium-'));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

let failures = 0;
let passes = 0;
function check(ok, what) {
  console.log(`${ok ? 'PASS' : 'FAIL'} ${what}`);
  if (ok) passes++;
  else failures++;
}

// Every page: console errors, uncaught exceptions and off-machine requests count.
async function open(url, name) {
  const page = await ctx.newPage();
  const errors = [];
  const warnings = [];
  const offsite = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
    if (m.type() === 'warning') warnings.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(base) || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    offsite.push(u);
    return route.abort();
  });
  await page.goto(url, { waitUntil: 'load' });
  return { page, errors, warnings, offsite, name };
}

try {
  // ---- the HTML report ----
  const r = await open(`${base}/report.html`, 'html report');
  const p = r.page;
  await p.waitForSelector('#gt-timeline');
  const tl = await p.evaluate(() => {
    const cv = document.getElementById('gt-timeline');
    const data = JSON.parse(document.getElementById('gt-data').textContent);
    const c = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    const colors = new Set();
    for (let i = 0; i < c.length; i += 4 * 7) colors.add(`${c[i]},${c[i + 1]},${c[i + 2]}`);
    const gaps = data.devices.reduce((n, d) => n + d.gaps.length, 0);
    return { w: cv.width, h: cv.height, colors: colors.size, gaps, span: data.span,
      rows: document.querySelectorAll('tr[id^="gap-"]').length,
      flame: document.querySelectorAll('.flame svg').length,
      cats: document.querySelectorAll('table')[0]?.rows.length || 0 };
  });
  check(tl.w > 0 && tl.h > 0 && tl.colors >= 4,
    `html report: timeline canvas drawn (${tl.w}x${tl.h} px, ${tl.colors} colours)`);
  check(tl.gaps > 0 && tl.rows > 0, `html report: ${tl.gaps} gaps on the timeline, ${tl.rows} in the largest-gaps table`);
  check(tl.flame === 1, 'html report: flame graph embedded');
  check(tl.cats === 10, 'html report: category table has the nine categories');
  // Hover the middle of the first gap: the tooltip explains it.
  const box = await p.locator('#gt-timeline').boundingBox();
  const first = await p.evaluate(() => {
    const d = JSON.parse(document.getElementById('gt-data').textContent);
    const g = d.devices[0].gaps.reduce((a, b) => (b[1] - b[0] > a[1] - a[0] ? b : a));
    return { mid: (g[0] + g[1]) / 2, span: d.span };
  });
  const x = box.x + 76 + (first.mid / first.span) * (box.width - 76 - 8);
  await p.mouse.move(x, box.y + 22 + 16 + 6 + 17);
  const tip = await p.evaluate(() => {
    const t = document.getElementById('gt-tip');
    return t.style.display === 'block' ? t.textContent : '';
  });
  check(/^gap \d+ \(GPU \d+, .*\): /.test(tip), `html report: hovering a gap explains it ("${tip.slice(0, 80)}")`);
  await p.screenshot({ path: path.join(artDir, 'html-report.png') });
  await p.screenshot({ path: path.join(artDir, 'html-report-full.png'), fullPage: true });
  check(r.errors.length === 0, `html report: no console errors${r.errors.length ? ': ' + r.errors.join(' | ') : ''}`);
  check(r.offsite.length === 0, `html report: no network request off this machine${r.offsite.length ? ': ' + r.offsite.join(' ') : ''}`);

  // ---- the export in speedscope ----
  const s = await open(`${base}/speedscope/index.html#profileURL=${encodeURIComponent(base + '/trace.json')}`, 'speedscope');
  const sp = s.page;
  // Loaded when the flame chart canvas is there and the import message is gone.
  await sp.waitForFunction(() => document.querySelectorAll('canvas').length > 0 &&
    !/Loading|Drag and drop/.test(document.body.innerText), null, { timeout: 30000 });
  await sp.waitForTimeout(500);
  const text = await sp.evaluate(() => document.body.innerText);
  check(!/went wrong|Unrecognized format|Failed to/i.test(text), 'speedscope: trace imported (no error page)');
  const nesting = s.warnings.filter((w) => /Tried to end|still open|Doing nothing/.test(w));
  check(nesting.length === 0, `speedscope: every slice nests (${nesting.length} nesting warnings${nesting.length ? ': ' + nesting[0] : ''})`);
  check(/\d+\s*\/\s*\d+/.test(text), `speedscope: one profile per track ("${(text.match(/\d+\s*\/\s*\d+/) || [''])[0]}")`);
  // speedscope opens the first track; 'n' steps to the next, until the wanted thread.
  for (let i = 0; i < 64; i++) {
    const title = await sp.evaluate(() => document.body.innerText.split('\n').find((l) => /\(\d+\/\d+\)/.test(l)) || '');
    if (title.includes(showThread)) break;
    await sp.keyboard.press('n');
    await sp.waitForTimeout(50);
  }
  await sp.screenshot({ path: path.join(artDir, 'export-speedscope.png') });
  check(s.errors.length === 0, `speedscope: no console errors${s.errors.length ? ': ' + s.errors.join(' | ') : ''}`);
  check(s.offsite.length === 0, `speedscope: no network request off this machine${s.offsite.length ? ': ' + s.offsite.join(' ') : ''}`);
} catch (e) {
  check(false, `browser run: ${e.message.split('\n')[0]}`);
} finally {
  await ctx.close();
  server.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
console.log(`html report and export: ${passes} passed, ${failures} failed (screenshots in ${artDir})`);
process.exit(failures ? 1 : 0);
