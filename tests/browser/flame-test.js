#!/usr/bin/env node
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// flame-test.js: opens gaptrace's flame graph SVG in headless Chromium (hover,
// zoom, search; no console or page errors) and loads its folded output in
// speedscope, keeping screenshots as test artifacts.
//
// Usage: node flame-test.js --svg FILE.svg --folded FILE.folded --out DIR
//        [--expect-frame NAME] [--chromium /usr/bin/chromium]
'use strict';

const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (e) {
  console.error('flame-test: playwright-core is missing: run tools/install-deps --browser');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { chromium: '/usr/bin/chromium', expectFrame: null };
  for (let i = 2; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    if (k === '--svg') a.svg = v;
    else if (k === '--folded') a.folded = v;
    else if (k === '--out') a.out = v;
    else if (k === '--expect-frame') a.expectFrame = v;
    else if (k === '--chromium') a.chromium = v;
    else {
      console.error(`flame-test: unknown argument ${k}`);
      process.exit(2);
    }
    i++;
  }
  if (!a.svg || !a.folded || !a.out) {
    console.error('usage: flame-test.js --svg FILE --folded FILE --out DIR');
    process.exit(2);
  }
  return a;
}

const args = parseArgs(process.argv);
// Chromium's flags for a quiet, self-contained run (no network, no profile state).
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const results = [];

function check(name, cond, detail) {
  results.push({ name, ok: !!cond });
  console.log(`${cond ? 'PASS' : 'FAIL'}  ${name}${!cond && detail ? ': ' + detail : ''}`);
}

// Collects every console error, uncaught exception and failed request of a page.
function watch(page, allowOrigin) {
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('file:') && !u.startsWith('data:') && !u.startsWith('blob:') &&
        !(allowOrigin && u.startsWith(allowOrigin)))
      errors.push(`unexpected request: ${u}`);
  });
  return errors;
}

async function testSvg(ctx) {
  const page = await ctx.newPage();
  const errors = watch(page, null);
  await page.goto('file://' + path.resolve(args.svg));
  await page.waitForSelector('g.gtf-f');
  // The whole graph in view (screenshots of SVG documents cannot scroll).
  const size = await page.evaluate(() => [+document.documentElement.getAttribute('width'),
    +document.documentElement.getAttribute('height')]);
  await page.setViewportSize({ width: Math.min(size[0], 4000), height: Math.min(size[1], 4000) });

  const info = await page.evaluate(() => {
    const svg = document.documentElement;
    const frames = [...document.querySelectorAll('g.gtf-f')];
    return {
      root: svg.localName,
      frames: frames.length,
      total: +svg.getAttribute('data-total'),
      width: +svg.getAttribute('data-frames-w'),
      names: frames.map((g) => g.querySelector('title').textContent),
    };
  });
  check('svg: renders as an SVG document with frames', info.root === 'svg' && info.frames > 3,
        `${info.root}, ${info.frames} frames`);
  if (args.expectFrame)
    check(`svg: has frame '${args.expectFrame}'`, info.names.includes(args.expectFrame));

  // The widest category frame: hover, then zoom into it.
  const cat = await page.evaluate(() => {
    const cats = [...document.querySelectorAll('g.gtf-f[data-d="1"]')];
    cats.sort((a, b) => b.getAttribute('data-w') - a.getAttribute('data-w'));
    return cats.map((g) => g.querySelector('title').textContent);
  });
  const first = page.locator(`g.gtf-f[data-d="1"] >> nth=0`);
  const frameOf = async (name) => {
    const all = page.locator('g.gtf-f[data-d="1"]');
    for (let i = 0; i < await all.count(); i++)
      if ((await all.nth(i).locator('title').textContent()) === name) return all.nth(i);
    return first;
  };
  const big = await frameOf(cat[0]);
  await big.locator('rect').hover();
  let details = await page.textContent('.gtf-details');
  // Differential graphs (gaptrace diff --flame svg) show before, after and the change.
  const diff = await page.evaluate(() => document.documentElement.getAttribute('data-diff') === '1');
  const want = diff ? /before .+, after .+, change [+-]/ : /\d+\.\d\d (ns|us|ms|s), \d+\.\d\d% of all/;
  check('svg: hover shows name, time and share', details.startsWith(cat[0] + ' \u2014 ') &&
        want.test(details), details);

  await big.locator('rect').click();
  const zoom = await page.evaluate((name) => {
    const gs = [...document.querySelectorAll('g.gtf-f[data-d="1"]')];
    const z = gs.find((g) => g.querySelector('title').textContent === name);
    const others = gs.filter((g) => g !== z);
    return {
      width: +z.querySelector('rect').getAttribute('width'),
      othersHidden: others.every((g) => g.classList.contains('gtf-hidden')),
      rootDimmed: document.querySelector('g.gtf-f[data-d="0"]').classList.contains('gtf-anc'),
      reset: !document.querySelector('.gtf-reset').classList.contains('gtf-hidden'),
    };
  }, cat[0]);
  check('svg: click zooms the frame to full width', Math.abs(zoom.width - info.width) < 1 &&
        zoom.othersHidden && zoom.rootDimmed && zoom.reset, JSON.stringify(zoom));
  await page.screenshot({ path: path.join(args.out, 'flame-zoomed.png') });
  await page.click('.gtf-reset');
  const unzoomed = await page.evaluate(() =>
    [...document.querySelectorAll('g.gtf-f')].filter((g) => g.classList.contains('gtf-hidden')).length);
  check('svg: reset zoom shows every frame again', unzoomed === 0, `${unzoomed} hidden`);

  // Search: a regex over frame names; the matched share is shown.
  const term = args.expectFrame ? args.expectFrame.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : cat[0];
  await page.fill('.gtf-search', term);
  const found = await page.evaluate(() => ({
    hits: document.querySelectorAll('g.gtf-hit').length,
    matched: document.querySelector('.gtf-matched').textContent,
  }));
  check('svg: search highlights matches', found.hits > 0 &&
        /^Matched: \d+\.\d\d% \(/.test(found.matched), JSON.stringify(found));
  await page.screenshot({ path: path.join(args.out, 'flame-search.png') });
  await page.fill('.gtf-search', '');
  const cleared = await page.evaluate(() => document.querySelectorAll('g.gtf-hit').length);
  check('svg: clearing the search clears highlights', cleared === 0);

  // The artifact: the whole graph with the details of the widest frame of the
  // first row above the threads (the outermost function).
  const deepest = await page.evaluate(() => {
    const gs = [...document.querySelectorAll('g.gtf-f[data-d="3"]')];
    gs.sort((a, b) => b.getAttribute('data-w') - a.getAttribute('data-w'));
    return gs.length ? [...document.querySelectorAll('g.gtf-f')].indexOf(gs[0]) : -1;
  });
  if (deepest >= 0) await page.locator('g.gtf-f').nth(deepest).locator('rect').hover();
  else await big.locator('rect').hover();
  await page.screenshot({ path: path.join(args.out, 'flame.png') });
  check('svg: no console errors, page errors or network requests', errors.length === 0,
        errors.join('; '));
  await page.close();
}

// Serves speedscope's release build and the folded file on 127.0.0.1 only.
function serve(root, folded) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
    '.woff2': 'font/woff2', '.png': 'image/png', '.ico': 'image/x-icon',
    '.wasm': 'application/wasm', '.json': 'application/json', '.txt': 'text/plain' };
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split('?')[0]);
    let file;
    if (url === '/profile/gaptrace.folded') file = folded;
    else if (url.startsWith('/speedscope/')) {
      file = path.join(root, path.normalize(url.slice('/speedscope/'.length)));
      if (!file.startsWith(root)) file = null;
    }
    if (!file || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function testSpeedscope(ctx) {
  const root = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release');
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    check('speedscope: package installed', false, `${root}/index.html missing`);
    return;
  }
  const server = await serve(root, path.resolve(args.folded));
  const base = `http://127.0.0.1:${server.address().port}`;
  const page = await ctx.newPage();
  const errors = watch(page, base);
  try {
    await page.setViewportSize({ width: 1200, height: 800 });
    const profileURL = encodeURIComponent(`${base}/profile/gaptrace.folded`);
    await page.goto(`${base}/speedscope/index.html#profileURL=${profileURL}&title=gaptrace-flame`);
    await page.waitForSelector('canvas', { timeout: 15000 });
    // The toolbar names the profile once it parsed; an import failure shows an error instead.
    await page.waitForFunction(() => document.title.includes('gaptrace-flame') ||
      document.body.innerText.includes('gaptrace-flame'), null, { timeout: 15000 });
    const text = await page.evaluate(() => document.body.innerText);
    check('speedscope: the folded profile loads and is named', text.includes('gaptrace-flame') &&
          !/Unrecognized format|Something went wrong|Failed to/i.test(text), text.slice(0, 200));
    const canvas = await page.evaluate(() => {
      const c = [...document.querySelectorAll('canvas')].map((e) => e.getBoundingClientRect());
      return c.reduce((m, r) => Math.max(m, r.width * r.height), 0);
    });
    check('speedscope: draws the flame chart', canvas > 100000, `largest canvas ${canvas} px`);

    // Hovering a frame of the chart's first row shows one of our categories in a tooltip.
    const folded = fs.readFileSync(args.folded, 'utf8');
    const roots = [...new Set(folded.split('\n').filter(Boolean).map((l) => l.split(';')[0]))];
    const before = new Set(text.split('\n'));
    let tip = '';
    for (let y = 120; y < 260 && !tip; y += 8) {
      for (let x = 40; x < 1160 && !tip; x += 120) {
        await page.mouse.move(x, y);
        tip = await page.evaluate(([names, seen]) => {
          const lines = document.body.innerText.split('\n');
          return lines.find((l) => !seen.includes(l) && /\d/.test(l) &&
            names.some((n) => l.includes(n))) || '';
        }, [roots, [...before]]);
      }
    }
    check('speedscope: hover shows one of our frames with its weight', tip !== '', 'no tooltip found');
    await page.screenshot({ path: path.join(args.out, 'speedscope.png') });
    check('speedscope: no console errors, page errors or foreign requests', errors.length === 0,
          errors.join('; '));
  } finally {
    await page.close();
    server.close();
  }
}

(async () => {
  fs.mkdirSync(args.out, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gaptrace-chromium-'));
  let ctx;
  try {
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: args.chromium,
      headless: true,
      args: FLAGS,
      viewport: { width: 1200, height: 800 },
      timeout: 60000,
    });
    await testSvg(ctx);
    await testSpeedscope(ctx);
  } catch (e) {
    check('browser run', false, e.stack || String(e));
  } finally {
    if (ctx) await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
