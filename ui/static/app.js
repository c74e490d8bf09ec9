// drover's web UI. The agent renders each page's empty shell (see
// ui/templates); this script fills it from the HTTP API (/v1/...) with the
// token kept in localStorage, and keeps it live with blocking queries
// (?index=N&wait=…): a request returns when the data changed, and the page
// is redrawn from the answer. Nothing is built or fetched from anywhere
// else; no framework: DOM nodes are made with h() and never from HTML
// strings, so no value from the API is ever parsed as markup.
'use strict';

const TOKEN_KEY = 'drover.token'; // localStorage: the ACL token's secret
const DENIED_KEY = 'drover.denied'; // sessionStorage: namespaces where a verb was refused
const WAIT = '30s'; // how long one blocking query waits
const LOG_TAIL = 16384; // bytes of a task's log shown first
const LOG_KEEP = 262144; // bytes of log kept on the page
const MAX_SAMPLES = 7200; // capacity samples kept (two hours at one a second)
const SVG_NS = 'http://www.w3.org/2000/svg';

// ---- DOM ----

function appendKids(el, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k == null || k === false) continue;
    el.append(k instanceof Node ? k : String(k));
  }
  return el;
}

// h makes an element: h('td', {class: 'x', onclick: f}, 'text', child…).
function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  return appendKids(el, kids);
}

// svg makes an SVG element with attributes.
function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v != null) el.setAttribute(k, String(v));
  }
  return appendKids(el, kids);
}

const $ = (id) => document.getElementById(id);

function fill(el, ...kids) {
  if (!el) return;
  el.replaceChildren();
  appendKids(el, kids);
}

// ---- formatting ----

const short = (id) => (id || '').slice(0, 8);
const enc = encodeURIComponent;

// toDate reads Nomad's two time forms: nanoseconds since the epoch, or an
// RFC 3339 string; the zero time is null.
function toDate(v) {
  if (v == null || v === 0 || v === '') return null;
  if (typeof v === 'number') return new Date(v / 1e6);
  if (typeof v === 'string' && v.startsWith('0001-01-01')) return null;
  const d = new Date(v);
  return isNaN(d) ? null : d;
}

const pad = (n) => String(n).padStart(2, '0');

function fmtTime(v) {
  const d = toDate(v);
  if (!d) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// fmtSecs words a number of seconds: 45s, 2m5s, 1h3m.
function fmtSecs(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? (s % 60) + 's' : ''}`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? Math.floor((s % 3600) / 60) + 'm' : ''}`;
}

// fmtDur words a Go duration (nanoseconds).
const fmtDur = (ns) => (ns ? fmtSecs(ns / 1e9) : '0s');

function ago(v) {
  const d = toDate(v);
  if (!d) return '';
  const s = (Date.now() - d.getTime()) / 1000;
  return s < 0 ? `in ${fmtSecs(-s)}` : `${fmtSecs(s)} ago`;
}

const timeCell = (v) => h('time', {datetime: toDate(v)?.toISOString(), title: fmtTime(v)}, ago(v));

const STATUS_CLASS = {
  running: 'info', successful: 'ok', complete: 'ok', ready: 'ok', healthy: 'ok', eligible: 'ok',
  failed: 'bad', lost: 'bad', down: 'bad', unhealthy: 'bad', cancelled: 'muted', dead: 'muted',
  paused: 'warn', pending: 'warn', initializing: 'warn', unknown: 'warn', disconnected: 'warn',
  ineligible: 'warn', 'in flight': 'info', waiting: 'muted', rolling: 'info', done: 'ok',
};

function badge(text, el) {
  const cls = 'badge ' + (STATUS_CLASS[text] || 'muted');
  if (el) {
    el.className = cls;
    el.textContent = text;
    return el;
  }
  return h('span', {class: cls}, text);
}

function facts(el, pairs) {
  fill(el, pairs.filter((p) => p && p[1] !== '' && p[1] != null).map(([k, v, id]) =>
    h('div', {class: 'fact'}, h('dt', null, k), h('dd', {id}, v))));
}

// ---- links ----

const nsQuery = (ns) => (ns && ns !== 'default' ? `?namespace=${enc(ns)}` : '');
const jobHref = (id, ns) => `/ui/jobs/${enc(id)}${nsQuery(ns)}`;
const link = (href, text, cls) => h('a', {href, class: cls}, text);
const jobLink = (id, ns) => link(jobHref(id, ns), id);
const depLink = (id) => link(`/ui/deployments/${enc(id)}`, short(id), 'mono');
const allocLink = (id) => link(`/ui/allocations/${enc(id)}`, short(id), 'mono');

// The namespace a page is about: ?namespace=, or "default".
const pageNamespace = () => new URLSearchParams(location.search).get('namespace') || 'default';

// ---- the API ----

class APIError extends Error {
  constructor(status, message, path) {
    super(message);
    this.status = status;
    this.path = path;
  }
}

function token() {
  try {
    return localStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

// api calls the HTTP API with the stored token (or secret, when given) and
// answers {data, index}; an answer other than 2xx throws an APIError with
// the API's message, a network failure an APIError of status 0.
async function api(method, path, body, {signal, secret} = {}) {
  const headers = {};
  const t = secret ?? token();
  if (t) headers['X-Nomad-Token'] = t;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let resp;
  try {
    resp = await fetch(path, {
      method, headers, signal, cache: 'no-store', credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new APIError(0, `cannot reach the agent (${e.message})`, path);
  }
  const text = await resp.text();
  if (!resp.ok) throw new APIError(resp.status, text.trim() || resp.statusText, path);
  return {data: text ? JSON.parse(text) : null, index: Number(resp.headers.get('X-Nomad-Index') || 0)};
}

const get = (path, opts) => api('GET', path, undefined, opts);

function withQuery(path, params) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params)) {
    if (v != null && v !== '') u.searchParams.set(k, v);
  }
  return u.pathname + u.search;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- banner (errors that are not the page's own) ----

const bannerMessages = new Map();

function banner(key, message) {
  if (message) bannerMessages.set(key, message);
  else bannerMessages.delete(key);
  const el = $('banner');
  el.hidden = bannerMessages.size === 0;
  fill(el, [...bannerMessages.values()].map((m) => h('div', null, m)));
}

// watch runs a blocking query on path for as long as the page is open:
// onData gets every new answer. A refusal (403) asks for a token and
// stops; onError may handle other errors (return true to stop); otherwise
// the query is retried with a growing delay.
function watch(path, onData, onError) {
  let index = 0;
  let delay = 0;
  const loop = async () => {
    for (;;) {
      try {
        const url = index > 0 ? withQuery(path, {index, wait: WAIT}) : path;
        const r = await get(url);
        delay = 0;
        banner('conn', null);
        banner(path, null);
        if (r.index < index) {
          // The state went back (restored from a snapshot): start again.
          index = 0;
          continue;
        }
        const changed = index === 0 || r.index > index;
        index = Math.max(r.index, 1);
        if (changed) onData(r.data);
      } catch (e) {
        if (e.status === 403) {
          needToken(e.message);
          return;
        }
        if (onError && onError(e)) return;
        banner(e.status ? path : 'conn', e.status ? `${path}: ${e.message}` : `Lost contact with the agent (${e.message}); retrying…`);
        delay = Math.min(delay ? delay * 2 : 500, 10000);
        await sleep(delay);
      }
    }
  };
  loop();
}

// ---- ACL tokens ----

const session = {acl: 'unknown', self: null, denied: new Set()};

try {
  session.denied = new Set(JSON.parse(sessionStorage.getItem(DENIED_KEY) || '[]'));
} catch {
  session.denied = new Set();
}

const listeners = [];
const onSession = (f) => listeners.push(f);

// whoami asks the API who the stored token is: GET /v1/acl/token/self
// answers the token, 403 without a known token (ACLs on), 400 with ACLs
// off.
async function whoami() {
  const el = $('whoami');
  try {
    const {data} = await get('/v1/acl/token/self');
    Object.assign(session, {acl: 'on', self: data});
    el.textContent = `${data.Name || short(data.AccessorID)} (${data.Type})`;
  } catch (e) {
    session.self = null;
    if (e.status === 400) {
      session.acl = 'off';
      el.textContent = 'ACLs off';
    } else if (e.status === 403) {
      session.acl = 'on';
      el.textContent = token() ? `Token refused: ${e.message} — sign in` : 'Anonymous — sign in';
    } else {
      el.textContent = 'Token: ?';
    }
  }
  document.body.dataset.acl = session.acl;
  listeners.forEach((f) => f());
}

// canWrite says whether to offer the deployment verbs in namespace ns:
// always with ACLs off or a management token; otherwise until the API has
// refused one (the refusal is shown, and remembered for the session).
function canWrite(ns) {
  if (session.acl === 'off' || session.self?.Type === 'management') return true;
  return !session.denied.has(ns);
}

function deny(ns) {
  session.denied.add(ns);
  try {
    sessionStorage.setItem(DENIED_KEY, JSON.stringify([...session.denied]));
  } catch {
    // storage off: remembered for this page only
  }
}

// needToken shows the token prompt with the API's refusal.
function needToken(message) {
  const p = $('token-prompt');
  if (!p) return;
  p.hidden = false;
  $('token-prompt-message').textContent = message;
  $('token-secret')?.focus();
}

function initTokenForm(onDone) {
  const form = $('token-form');
  if (!form) return;
  const input = $('token-secret');
  const note = h('p', {class: 'form-result', role: 'status', id: 'token-result'});
  form.after(note);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const secret = input.value.trim();
    if (!secret) return;
    try {
      await get('/v1/acl/token/self', {secret});
    } catch (e) {
      if (e.status === 400) {
        note.textContent = 'ACLs are off on this agent: no token is needed.';
        return;
      }
      note.className = 'form-result error';
      note.textContent = `Token refused: ${e.message}`;
      return;
    }
    try {
      localStorage.setItem(TOKEN_KEY, secret);
      sessionStorage.removeItem(DENIED_KEY);
    } catch {
      note.textContent = 'This browser does not let the page keep the token (local storage is off).';
      return;
    }
    onDone();
  });
  $('token-clear').addEventListener('click', () => {
    try {
      localStorage.removeItem(TOKEN_KEY);
      sessionStorage.removeItem(DENIED_KEY);
    } catch {
      // nothing kept
    }
    onDone();
  });
}

function tokensPage() {
  const render = () => {
    const el = $('token-info');
    if (session.acl === 'off') {
      fill(el, h('p', null, 'ACLs are off on this agent: every page works without a token.'));
    } else if (session.self) {
      const t = session.self;
      fill(el, h('dl', {class: 'facts'}, [
        ['Name', t.Name], ['Accessor ID', h('span', {class: 'mono'}, t.AccessorID)], ['Type', t.Type],
        ['Policies', (t.Policies || []).join(', ') || '—'], ['Created', fmtTime(t.CreateTime)],
        ['Expires', t.ExpirationTime ? fmtTime(t.ExpirationTime) : 'never'],
      ].map(([k, v]) => h('div', {class: 'fact'}, h('dt', null, k), h('dd', null, v)))));
    } else {
      fill(el, h('p', null, token() ? 'The stored token is refused: enter another.' : 'No token: pages show what the anonymous policy allows.'));
    }
  };
  onSession(render);
}

// ---- confirmation ----

// confirmAction asks in a modal dialog; it resolves true on Confirm.
function confirmAction(title, text, label) {
  const dlg = $('confirm');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = label;
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), {once: true});
    dlg.returnValue = '';
    dlg.showModal();
    $('confirm-cancel').focus();
  });
}

// ---- jobs ----

function jobsPage() {
  const details = new Map(); // namespace/id → {JobModifyIndex, Version, desired}
  let stubs = [];
  const key = (s) => `${s.Namespace}/${s.ID}`;
  const render = () => {
    $('jobs-empty').hidden = stubs.length > 0;
    fill($('jobs'), stubs.map((s) => {
      const d = details.get(key(s));
      let running = 0;
      for (const g of Object.values(s.JobSummary?.Summary || {})) running += g.Running;
      return h('tr', {'data-job': s.ID},
        h('td', null, jobLink(s.ID, s.Namespace)),
        h('td', null, s.Namespace),
        h('td', null, s.Type),
        h('td', null, badge(s.Status)),
        h('td', {'data-k': 'version'}, d ? String(d.Version) : '…'),
        h('td', {'data-k': 'running'}, `${running} / ${d ? d.desired : '…'}`),
        h('td', null, timeCell(s.SubmitTime)));
    }));
  };
  // A job's version and count change only with its JobModifyIndex: a job
  // is read again only then.
  const refresh = async () => {
    await Promise.all(stubs.map(async (s) => {
      const k = key(s);
      if (details.get(k)?.JobModifyIndex === s.JobModifyIndex) return;
      try {
        const {data: j} = await get(`/v1/job/${enc(s.ID)}?namespace=${enc(s.Namespace)}`);
        const desired = (j.TaskGroups || []).reduce((n, g) => n + (g.Count || 0), 0);
        details.set(k, {JobModifyIndex: s.JobModifyIndex, Version: j.Version, desired});
      } catch {
        // gone meanwhile: the next list drops it
      }
    }));
    render();
  };
  watch('/v1/jobs?namespace=*', (list) => {
    stubs = (list || []).sort((a, b) => a.ID.localeCompare(b.ID));
    render();
    refresh();
  });
}

// ---- a job ----

// REGIONS_EVERY is how often a multi-region job's page reads the other
// regions' deployments (ms).
const REGIONS_EVERY = 3000;

function jobPage(id) {
  const ns = pageNamespace();
  const q = `namespace=${enc(ns)}`;
  const base = `/v1/job/${enc(id)}`;
  let job = null;
  let allocs = [];
  let versionsIndex = -1;
  let dep = null;
  const notFound = (e) => {
    if (e.status !== 404) return false;
    fill($('job-facts'), h('p', {class: 'error'}, `No job ${id} in namespace ${ns}.`));
    return true;
  };
  const renderGroups = () => {
    if (!job) return;
    fill($('job-groups'), (job.TaskGroups || []).map((g) => {
      const c = {running: 0, starting: 0, complete: 0, failed: 0, lost: 0};
      for (const a of allocs) {
        if (a.TaskGroup !== g.Name || a.JobVersion > job.Version) continue;
        if (a.ClientStatus === 'running') c.running++;
        else if (a.ClientStatus === 'pending') c.starting++;
        else if (a.ClientStatus === 'complete') c.complete++;
        else if (a.ClientStatus === 'failed') c.failed++;
        else if (a.ClientStatus === 'lost') c.lost++;
      }
      const queued = Math.max(0, (g.Count || 0) - c.running - c.starting);
      return h('tr', {'data-group': g.Name}, h('td', null, g.Name), h('td', null, g.Count),
        h('td', {'data-k': 'running'}, c.running), h('td', null, c.starting), h('td', null, job.Type === 'service' ? queued : '—'),
        h('td', null, c.complete), h('td', null, c.failed), h('td', null, c.lost),
        h('td', null, (g.Tasks || []).map((t) => `${t.Name} (${t.Driver})`).join(', ')));
    }));
  };
  // A multi-region job: each region's deployment of the job's version,
  // read from that region (?region=, forwarded by the agent) in the order
  // the regions roll, every few seconds; a region that does not answer
  // shows as unreachable.
  let regionsTimer = null;
  let regionsSeq = 0;
  const renderRegions = () => {
    const regions = job?.Multiregion?.Regions || [];
    $('job-regions-section').hidden = regions.length === 0;
    if (!regions.length) return;
    const seq = ++regionsSeq;
    const version = job.Version;
    Promise.all(regions.map((r) => get(`${base}/deployments?${q}&region=${enc(r.Name)}`)
      .then(({data}) => ({r, d: (data || []).find((d) => d.JobVersion === version) || null}))
      .catch((e) => ({r, err: e.message}))))
      .then((rows) => {
        if (seq !== regionsSeq) return;
        fill($('job-regions'), rows.map(({r, d, err}, i) => h('tr', {'data-region': r.Name},
          h('td', null, r.Name), h('td', null, String(i + 1)), h('td', null, String(r.Count)),
          h('td', null, d ? depLink(d.ID) : err ? h('span', {class: 'error'}, 'unreachable') : '—'),
          h('td', {'data-k': 'status'}, d ? badge(d.Status) : ''),
          h('td', null, d ? d.StatusDescription : err || 'No deployment of this version yet.'))));
      });
  };
  watch(`${base}?${q}`, (j) => {
    job = j;
    document.title = `Job ${j.ID} · drover`;
    badge(j.Stop ? 'stopped' : j.Status, $('job-status'));
    facts($('job-facts'), [
      ['Type', j.Type], ['Namespace', j.Namespace], ['Version', String(j.Version), 'job-version'],
      ['Stable', j.Stable ? 'yes' : 'no'], ['Priority', String(j.Priority)],
      ['Datacenters', (j.Datacenters || []).join(', ')], ['Node pool', j.NodePool],
      ['Submitted', fmtTime(j.SubmitTime)],
    ]);
    renderGroups();
    if (j.Multiregion?.Regions?.length && !regionsTimer) {
      renderRegions();
      regionsTimer = setInterval(renderRegions, REGIONS_EVERY);
    }
    if (j.JobModifyIndex !== versionsIndex) {
      versionsIndex = j.JobModifyIndex;
      get(`${base}/versions?diffs=true&${q}`).then(({data}) => renderVersions(data)).catch((e) => {
        fill($('job-versions'), h('p', {class: 'error'}, e.message));
      });
    }
  }, notFound);
  watch(`${base}/allocations?${q}`, (list) => {
    allocs = (list || []).sort((a, b) => b.CreateIndex - a.CreateIndex);
    renderGroups();
    renderDeployment();
    fill($('job-allocs'), allocs.map((a) => h('tr', {'data-alloc': a.ID},
      h('td', null, allocLink(a.ID)), h('td', null, a.TaskGroup), h('td', null, a.JobVersion),
      h('td', {class: 'mono'}, a.NodeName || short(a.NodeID)), h('td', null, a.DesiredStatus),
      h('td', null, badge(a.ClientStatus)), h('td', null, healthWord(a)), h('td', null, timeCell(a.CreateTime)))));
  }, notFound);
  // The latest deployment's groups, with bars of old serving, new
  // healthy, in flight and unhealthy: the deployment's live figures
  // (depInFlight) and, for the old version, the job's allocations.
  const renderDeployment = () => {
    const d = dep;
    const el = $('job-deployment');
    if (!d || !d.ID) {
      fill(el, h('p', {class: 'muted'}, 'No deployment.'));
      return;
    }
    fill(el, h('div', {class: 'dep-summary'},
      h('p', null, depLink(d.ID), ' ', badge(d.Status), ` version ${d.JobVersion} — ${d.StatusDescription}`),
      h('table', {class: 'list compact'},
        h('thead', null, h('tr', null, ['Group', 'Desired', 'Canaries', 'Placed', 'Healthy', 'Unhealthy', 'Progress', 'Waits on'].map((c) => h('th', null, c)))),
        h('tbody', null, groupNames(d).map((g) => {
          const s = d.TaskGroups[g];
          const active = d.Status === 'running' || d.Status === 'paused';
          const old = active ? oldServing(allocs, g, d.JobVersion) : 0;
          return h('tr', {'data-group': g}, h('td', null, g), h('td', null, s.DesiredTotal),
            h('td', null, s.DesiredCanaries ? `${(s.PlacedCanaries || []).length}/${s.DesiredCanaries}${s.Promoted ? ' promoted' : ''}` : '—'),
            h('td', null, s.PlacedAllocs), h('td', null, s.LiveHealthyAllocs), h('td', null, s.UnhealthyAllocs),
            h('td', null, progressBar(old, s.LiveHealthyAllocs, depInFlight(s), s.MarkedUnhealthyAllocs || 0, s.DesiredTotal, s.DesiredTotal)),
            h('td', {'data-k': 'waits'}, active ? s.WaitReason || '' : ''));
        })))));
  };
  watch(`${base}/deployment?${q}`, (d) => {
    dep = d;
    renderDeployment();
  }, notFound);
}

// depInFlight is a deployment group's allocations placed and not yet
// healthy nor failed, from its figures: its zones' InFlight when it rolls
// by zones, else those placed less the first verdicts.
function depInFlight(s) {
  if ((s.Zones || []).length) return s.Zones.reduce((n, z) => n + (z.InFlight || 0), 0);
  return Math.max(0, (s.PlacedAllocs || 0) - (s.HealthyAllocs || 0) - (s.UnhealthyAllocs || 0));
}

// oldServing counts a group's allocations of an older version than the
// deployment's that still serve.
function oldServing(allocs, g, version) {
  return allocs.filter((a) => a.TaskGroup === g && a.JobVersion < version && a.DesiredStatus === 'run' &&
    a.ClientStatus === 'running' && a.DeploymentStatus?.Healthy !== false).length;
}

function healthWord(a) {
  const ds = a.DeploymentStatus;
  if (!ds || ds.Healthy == null) return '';
  return badge(ds.Healthy ? 'healthy' : 'unhealthy');
}

// renderVersions shows each version with what changed from the one
// before (Diffs[i] is from Versions[i+1] to Versions[i]).
function renderVersions(data) {
  const vs = data?.Versions || [];
  fill($('job-versions'), vs.map((v, i) => {
    const diff = data.Diffs?.[i];
    const lines = diff ? diffLines(diff) : [];
    return h('details', {class: 'version', open: i === 0, 'data-version': v.Version},
      h('summary', null, h('strong', null, `Version ${v.Version}`), v.Stable ? ' ' : '', v.Stable ? badge('stable') : '',
        ` submitted ${fmtTime(v.SubmitTime)}`, i < vs.length - 1 ? ` — ${lines.length} change${lines.length === 1 ? '' : 's'}` : ' — first version'),
      lines.length ? h('ul', {class: 'diff'}, lines) : h('p', {class: 'muted'}, i < vs.length - 1 ? 'No change to the job specification.' : ''));
  }));
}

const DIFF_MARK = {Added: '+', Deleted: '-', Edited: '~'};

// diffLines flattens a job diff into list items of the changed fields,
// each named by its path (Group web › Task app › Env[VERSION]).
function diffLines(d) {
  const out = [];
  const fields = (path, fs) => {
    for (const f of fs || []) {
      if (f.Type === 'None') continue;
      const val = f.Type === 'Added' ? f.New : f.Type === 'Deleted' ? f.Old : null;
      out.push(h('li', {class: 'diff-' + f.Type.toLowerCase()},
        h('span', {class: 'mark'}, DIFF_MARK[f.Type] || ' '), ' ', [...path, f.Name].join(' › '), ': ',
        val != null ? h('code', null, val) : [h('code', null, f.Old), ' → ', h('code', null, f.New)],
        (f.Annotations || []).length ? h('span', {class: 'muted'}, ` (${f.Annotations.join(', ')})`) : ''));
    }
  };
  const objects = (path, os) => {
    for (const o of os || []) {
      if (o.Type === 'None') continue;
      const p = [...path, o.Name];
      fields(p, o.Fields);
      objects(p, o.Objects);
    }
  };
  fields([], d.Fields);
  objects([], d.Objects);
  for (const g of d.TaskGroups || []) {
    if (g.Type === 'None') continue;
    const gp = [`Group ${g.Name}`];
    if (g.Type !== 'Edited') out.push(h('li', {class: 'diff-' + g.Type.toLowerCase()}, h('span', {class: 'mark'}, DIFF_MARK[g.Type]), ` group ${g.Name}`));
    fields(gp, g.Fields);
    objects(gp, g.Objects);
    for (const t of g.Tasks || []) {
      if (t.Type === 'None') continue;
      const tp = [...gp, `Task ${t.Name}`];
      if (t.Type !== 'Edited') out.push(h('li', {class: 'diff-' + t.Type.toLowerCase()}, h('span', {class: 'mark'}, DIFF_MARK[t.Type]), ` task ${t.Name}`));
      fields(tp, t.Fields);
      objects(tp, t.Objects);
    }
  }
  return out;
}

// ---- deployments ----

// groupNames orders a deployment's groups: by rollout order when its
// groups roll one at a time, by name otherwise.
function groupNames(d) {
  const names = Object.keys(d.TaskGroups || {}).sort();
  const order = (n) => d.TaskGroups[n]?.Order || Infinity;
  return names.sort((a, b) => order(a) - order(b) || a.localeCompare(b));
}

const terminal = (a) => a.DesiredStatus !== 'run' || ['complete', 'failed', 'lost'].includes(a.ClientStatus);
const healthOf = (a) => a.DeploymentStatus?.Healthy ?? null;

// amountOf resolves a count or a share ("25%") against count, rounding a
// share up (up) or down.
function amountOf(a, count, up) {
  if (a == null) return null;
  if (typeof a === 'number') return a;
  const p = parseInt(a, 10);
  return up ? Math.ceil((p * count) / 100) : Math.floor((p * count) / 100);
}

// groupView is what the page shows of one group: the deployment's
// figures, and from the allocations those of the old version still
// serving and those of the new one in flight.
function groupView(d, g, spec, depAllocs, jobAllocs) {
  const s = d.TaskGroups[g];
  const mine = new Set(depAllocs.map((a) => a.ID));
  const fresh = depAllocs.filter((a) => a.TaskGroup === g);
  const old = jobAllocs.filter((a) => a.TaskGroup === g && !mine.has(a.ID) && a.JobVersion <= d.JobVersion && !terminal(a));
  const live = fresh.filter((a) => !terminal(a));
  return {
    name: g, s, spec, update: spec?.Update || null,
    count: s.DesiredTotal,
    oldServing: old.filter((a) => a.ClientStatus === 'running' && healthOf(a) !== false).length,
    oldLeft: old.length,
    newHealthy: s.LiveHealthyAllocs,
    inFlight: live.filter((a) => healthOf(a) == null),
    unhealthy: s.UnhealthyAllocs,
    markedUnhealthy: s.MarkedUnhealthyAllocs,
    canaryAllocs: live.filter((a) => a.DeploymentStatus?.Canary || (s.PlacedCanaries || []).includes(a.ID)),
  };
}

// startedAt is when an allocation's tasks all run (the latest start).
function startedAt(a) {
  let t = null;
  for (const ts of Object.values(a.TaskStates || {})) {
    const d = toDate(ts.StartedAt);
    if (ts.State === 'running' && d && (!t || d > t)) t = d;
  }
  return t;
}

// groupDone says whether the group reached its goal, as the watcher
// counts it: promoted if it has canaries, and every desired allocation
// healthy.
const groupDone = (s) => s.LiveHealthyAllocs >= s.DesiredTotal && (!s.DesiredCanaries || s.Promoted);

// waitsFor says what the group's rollout waits for now: the deployment
// watcher's own sentence (WaitReason), written when it decides; the page
// works nothing out by itself.
function waitsFor(d, v) {
  if (['pending', 'blocked'].includes(d.Status)) {
    // A multi-region deployment waiting for its region's turn, or done
    // here and waiting for the other regions.
    return `Waits for the other regions: ${d.StatusDescription}`;
  }
  if (!['running', 'paused'].includes(d.Status)) {
    return d.Status === 'successful' ? 'Done.' : `Ended: ${d.StatusDescription}`;
  }
  if (v.s.WaitReason) return v.s.WaitReason;
  return groupDone(v.s) ? 'Done: every allocation runs the new version, healthy.' : 'Nothing holds it: the next batch starts.';
}

// nextCheckpoint is the healthy count of the group's next checkpoint, or
// null.
function nextCheckpoint(v) {
  const cps = v.update?.Checkpoints;
  if (!cps || v.s.CheckpointsReached >= cps.length) return null;
  const a = cps[v.s.CheckpointsReached];
  return {at: Math.max(1, amountOf(a, v.count, true)), written: String(a)};
}

// progressBar draws old serving, new healthy, in flight and unhealthy as
// segments of one bar against max(count, their sum).
function progressBar(old, fresh, inFlight, unhealthy, count, scale) {
  const total = Math.max(scale || 0, count, old + fresh + inFlight + unhealthy, 1);
  const W = 300;
  let x = 0;
  const seg = (n, cls) => {
    const w = (n / total) * W;
    const r = svg('rect', {x, y: 0, width: w, height: 14, class: cls});
    x += w;
    return n > 0 ? r : null;
  };
  const label = `${old} old serving, ${fresh} new healthy, ${inFlight} in flight, ${unhealthy} unhealthy, of ${count}`;
  return svg('svg', {class: 'bar', viewBox: `0 0 ${W} 18`, role: 'img', 'aria-label': label, preserveAspectRatio: 'none'},
    svg('title', null, label),
    svg('rect', {x: 0, y: 0, width: W, height: 14, class: 'bar-bg'}),
    seg(old, 'bar-old'), seg(fresh, 'bar-new'), seg(inFlight, 'bar-flight'), seg(unhealthy, 'bar-bad'),
    svg('line', {x1: (count / total) * W, x2: (count / total) * W, y1: 0, y2: 18, class: 'bar-count'}));
}

function figure(label, value, key, title) {
  return h('div', {class: 'figure', title}, h('span', {class: 'figure-value', 'data-k': key}, String(value)), h('span', {class: 'figure-label'}, label));
}

// policyLine is the group's update block as it rolls.
function policyLine(v) {
  const u = v.update;
  if (!u) return '';
  const parts = [`max_parallel ${u.MaxParallelPercent != null ? `${u.MaxParallelPercent}% (${u.MaxParallel})` : u.MaxParallel}`,
    `min_healthy_time ${fmtDur(u.MinHealthyTime)}`, `health_check ${u.HealthCheck}`, `healthy_deadline ${fmtDur(u.HealthyDeadline)}`];
  if (u.Canary) parts.push(`canary ${u.Canary}${u.AutoPromote ? ' (auto_promote)' : ''}`);
  if (u.MaxSurge != null) parts.push(`max_surge ${u.MaxSurge} (${amountOf(u.MaxSurge, v.count, true)})`);
  if (u.FirstBatch != null) parts.push(`first_batch ${u.FirstBatch}`);
  if (u.UnhealthyFirst) parts.push('unhealthy_first');
  if (u.MaxUnhealthy != null) parts.push(`max_unhealthy ${u.MaxUnhealthy}`);
  if (u.MaxFailed != null) parts.push(`max_failed ${u.MaxFailed}`);
  if (u.OnFailure) parts.push(`on_failure ${u.OnFailure}`);
  if (u.StaggerSet) parts.push(`stagger ${fmtDur(u.Stagger)}`);
  if (u.Zones) {
    const z = u.Zones;
    parts.push(`zones ${z.Mode || 'zone_by_zone'} by ${z.Attribute}${z.Order?.length ? `, order [${z.Order.join(', ')}]` : ''}` +
      `${z.DisruptionBudget != null ? `, disruption_budget ${z.DisruptionBudget}` : ''}${z.SuccessThreshold != null ? `, success_threshold ${z.SuccessThreshold}` : ''}` +
      `${z.PauseBetweenZones ? `, pause_between_zones ${fmtDur(z.PauseBetweenZones)}` : ''}`);
  }
  if (u.Checkpoints?.length) parts.push(`checkpoints [${u.Checkpoints.join(', ')}] (${v.s.CheckpointsReached} reached)${u.CheckpointDelay ? `, checkpoint_delay ${fmtDur(u.CheckpointDelay)}` : ''}`);
  return parts.join(' · ');
}

function groupCard(d, v, now) {
  const s = v.s;
  const u = v.update;
  const cp = nextCheckpoint(v);
  const mht = u ? u.MinHealthyTime / 1e6 : 0;
  const batch = v.inFlight.map((a) => {
    const st = startedAt(a);
    const due = st && mht ? new Date(st.getTime() + mht) : null;
    return h('tr', {'data-alloc': a.ID}, h('td', null, allocLink(a.ID)), h('td', {class: 'mono'}, a.NodeName || short(a.NodeID)),
      h('td', null, a.DeploymentStatus?.Canary ? 'canary' : ''), h('td', null, badge(a.ClientStatus)),
      h('td', null, st ? `started ${ago(st)}` : 'starting'),
      h('td', null, due ? (due > now ? `healthy in ≈${fmtSecs((due - now) / 1000)} if it stays up` : 'waiting for its health checks') : ''));
  });
  return h('article', {class: 'group', 'data-group': v.name},
    h('header', null, h('h3', null, v.name), s.State ? badge(s.State) : '', s.Order ? h('span', {class: 'muted'}, ` order ${s.Order}`) : '',
      s.RequireProgressBy && d.Status === 'running' && toDate(s.RequireProgressBy) ? h('span', {class: 'muted right'}, `progress deadline ${fmtTime(s.RequireProgressBy)}`) : ''),
    progressBar(v.oldServing, v.newHealthy, v.inFlight.length, v.markedUnhealthy, v.count, 0),
    h('div', {class: 'figures'},
      figure('desired', v.count, 'desired'),
      figure('old serving', v.oldServing, 'old-serving', 'allocations of the previous version still running'),
      figure('new healthy', v.newHealthy, 'new-healthy', 'allocations of this version healthy now'),
      figure('in flight', v.inFlight.length, 'in-flight', 'placed, not yet healthy nor failed'),
      figure('unhealthy', v.unhealthy, 'unhealthy', 'failures of this version during the deployment'),
      figure('placed', s.PlacedAllocs, 'placed'),
      s.DesiredCanaries ? figure('canaries', `${s.LiveHealthyCanaries}/${s.DesiredCanaries}${s.Promoted ? ' ✓' : ''}`, 'canaries',
        s.Promoted ? 'promoted' : 'healthy / desired, not promoted') : null,
      cp ? figure('next checkpoint', `${cp.at}`, 'checkpoint', `checkpoint ${cp.written}`) : null),
    h('p', {class: 'waits', 'data-k': 'waits'}, waitsFor(d, v)),
    analysisTable(v),
    batch.length ? h('table', {class: 'list compact batch'},
      h('caption', null, 'Current batch'),
      h('thead', null, h('tr', null, ['Allocation', 'Node', '', 'Status', 'Started', 'Health'].map((c) => h('th', null, c)))),
      h('tbody', null, batch)) : null,
    (s.Zones || []).length ? h('table', {class: 'list compact zones'},
      h('caption', null, 'Zones, in rollout order'),
      h('thead', null, h('tr', null, ['Zone', 'Size', 'Healthy', 'In flight', 'Failed', 'State', ''].map((c) => h('th', null, c)))),
      h('tbody', null, s.Zones.map((z) => h('tr', {'data-zone': z.Name},
        h('td', null, z.Name || '(none)'), h('td', null, z.Size), h('td', null, z.Healthy), h('td', null, z.InFlight),
        h('td', null, z.Failed), h('td', null, badge(z.State)), h('td', null, progressBar(0, z.Healthy, z.InFlight, z.Failed, z.Size, 0)))))) : null,
    h('p', {class: 'policy muted'}, policyLine(v)));
}

// tickStep is a round step in seconds for a time axis of span seconds.
function tickStep(span) {
  for (const step of [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200]) {
    if (span / step <= 8) return step;
  }
  return 14400;
}

// plot draws the serving capacity samples as stacked step areas (old
// healthy below, new healthy above) with the desired count as a dashed
// line; time runs from the first sample to now.
function plot(samples, now) {
  const W = 1000;
  const H = 220;
  const L = 44;
  const R = 16;
  const T = 12;
  const B = 28;
  if (!samples.length) return h('p', {class: 'muted'}, 'Waiting for the first sample…');
  const t0 = samples[0].t;
  const t1 = Math.max(now, t0 + 10000);
  let ymax = 1;
  for (const p of samples) ymax = Math.max(ymax, p.count, p.old + p.fresh);
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const y = (n) => H - B - (n / ymax) * (H - T - B);
  const until = (i) => (i + 1 < samples.length ? samples[i + 1].t : t1);
  const area = (lo, hi) => {
    const top = [];
    const bottom = [];
    samples.forEach((p, i) => {
      top.push(`${x(p.t)},${y(hi(p))}`, `${x(until(i))},${y(hi(p))}`);
      bottom.unshift(`${x(until(i))},${y(lo(p))}`, `${x(p.t)},${y(lo(p))}`);
    });
    return [...top, ...bottom].join(' ');
  };
  const countLine = samples.flatMap((p, i) => [`${x(p.t)},${y(p.count)}`, `${x(until(i))},${y(p.count)}`]).join(' ');
  const last = samples[samples.length - 1];
  const yticks = [...new Set([0, last.count, ymax])];
  const span = (t1 - t0) / 1000;
  const step = tickStep(span);
  const xticks = [];
  for (let s = step; s < span - step / 3; s += step) xticks.push(s);
  const label = `serving capacity: ${last.old} old + ${last.fresh} new healthy of ${last.count}`;
  return [
    h('div', {class: 'legend'},
      h('span', {class: 'swatch old'}), `old healthy ${last.old}`,
      h('span', {class: 'swatch new'}), `new healthy ${last.fresh}`,
      h('span', {class: 'swatch count'}), `count ${last.count}`),
    svg('svg', {viewBox: `0 0 ${W} ${H}`, class: 'capacity', role: 'img', 'aria-label': label, id: 'capacity-plot'},
      svg('title', null, label),
      yticks.map((n) => [svg('line', {x1: L, x2: W - R, y1: y(n), y2: y(n), class: 'grid'}),
        svg('text', {x: L - 8, y: y(n) + 4, class: 'axis', 'text-anchor': 'end'}, n)]),
      svg('polygon', {points: area(() => 0, (p) => p.old), class: 'area-old'}),
      svg('polygon', {points: area((p) => p.old, (p) => p.old + p.fresh), class: 'area-new'}),
      svg('polyline', {points: countLine, class: 'count-line'}),
      xticks.map((s) => [svg('line', {x1: x(t0 + s * 1000), x2: x(t0 + s * 1000), y1: H - B, y2: H - B + 4, class: 'grid'}),
        svg('text', {x: x(t0 + s * 1000), y: H - 8, class: 'axis', 'text-anchor': 'middle'}, `+${fmtSecs(s)}`)]),
      svg('text', {x: L, y: H - 8, class: 'axis', 'text-anchor': 'start'}, fmtTime(new Date(t0)).slice(11)),
      svg('text', {x: W - R, y: H - 8, class: 'axis', 'text-anchor': 'end'}, `now +${fmtSecs(span)}`)),
  ];
}

// ---- analysis runs ----

// analysisSpec is the analysis block a run belongs to, from the group's
// update block in the deployment's job version; null when unknown.
const analysisSpec = (v, name) => (v.update?.Analyses || []).find((a) => a.Name === name) || null;

// conditionText is an analysis block's success and failure expressions.
function conditionText(a) {
  if (!a) return '';
  return [a.Success ? `success: ${a.Success}` : '', a.Failure ? `failure: ${a.Failure}` : ''].filter(Boolean).join('; ');
}

// measurementText is one measurement's value as its condition saw it.
function measurementText(m) {
  if ((m.Results || []).length > 1) return `[${m.Results.map((x) => +x.toPrecision(6)).join(', ')}]`;
  if (m.Result != null) return String(+m.Result.toPrecision(6));
  return m.Outcome || '';
}

// analysisTable lists the group's analysis runs: name, when (with batch
// and zone), phase, counts by outcome, the last values against the
// condition, and the last error.
function analysisTable(v) {
  const runs = v.s.Analyses || [];
  if (!runs.length) return null;
  return h('table', {class: 'list compact analyses'},
    h('caption', null, 'Analysis runs'),
    h('thead', null, h('tr', null, ['Analysis', 'When', 'Phase', 'Success', 'Failure', 'Inconclusive', 'Errors', 'Last values', 'Condition'].map((c) => h('th', null, c)))),
    h('tbody', null, runs.map((r) => {
      const ms = r.Measurements || [];
      const last = ms[ms.length - 1];
      const where = [r.When, r.Batch ? `batch ${r.Batch}` : '', r.Zone ? `zone ${r.Zone}` : ''].filter(Boolean).join(', ');
      return h('tr', {'data-run': `${r.Name}/${r.Batch || 0}`},
        h('td', null, r.Name), h('td', null, where), h('td', {'data-k': 'phase'}, badge(r.Phase)),
        h('td', null, r.Successes), h('td', null, r.Failures), h('td', null, r.Inconclusives), h('td', null, r.Errors),
        h('td', {class: 'mono', 'data-k': 'values'}, ms.slice(-5).map(measurementText).join(', ') || '—'),
        h('td', {class: 'mono', 'data-k': 'condition'}, conditionText(analysisSpec(v, r.Name)),
          last?.Outcome === 'error' && last.Error ? h('div', {class: 'bad'}, `last error: ${last.Error}`) : null));
    })));
}

// analysisPlot draws one run's measurements over time, as the capacity
// plot draws its samples: each result a point coloured by its outcome,
// joined by a line; an error a mark on the time axis.
function analysisPlot(v, r) {
  const W = 1000;
  const H = 160;
  const L = 44;
  const R = 16;
  const T = 12;
  const B = 28;
  const ms = (r.Measurements || []).map((m) => ({t: toDate(m.At)?.getTime(), m})).filter((p) => p.t != null);
  const label = `analysis ${r.Name} of group ${v.name}${r.Batch ? ` after batch ${r.Batch}` : ''}: ${r.Phase}, ${ms.length} measurements`;
  if (!ms.length) return h('div', {class: 'plot-run'}, h('p', {class: 'muted'}, `${label}: no measurement yet.`));
  const t0 = ms[0].t;
  const t1 = Math.max(ms[ms.length - 1].t, t0 + 10000);
  const vals = ms.flatMap((p) => (p.m.Results?.length ? p.m.Results : p.m.Result != null ? [p.m.Result] : []));
  let ymax = Math.max(...vals, 0);
  let ymin = Math.min(...vals, 0);
  if (ymax === ymin) ymax = ymin + 1;
  const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const y = (n) => H - B - ((n - ymin) / (ymax - ymin)) * (H - T - B);
  const withValue = ms.filter((p) => p.m.Result != null);
  const span = (t1 - t0) / 1000;
  return h('div', {class: 'plot-run', 'data-run': `${r.Name}/${r.Batch || 0}`},
    h('div', {class: 'legend'}, h('strong', null, r.Name), ` ${r.When}${r.Batch ? ` batch ${r.Batch}` : ''}${r.Zone ? ` zone ${r.Zone}` : ''} · `, badge(r.Phase),
      ` · ${conditionText(analysisSpec(v, r.Name))}`),
    svg('svg', {viewBox: `0 0 ${W} ${H}`, class: 'capacity analysis', role: 'img', 'aria-label': label},
      svg('title', null, label),
      [...new Set([ymin, ymax])].map((n) => [svg('line', {x1: L, x2: W - R, y1: y(n), y2: y(n), class: 'grid'}),
        svg('text', {x: L - 8, y: y(n) + 4, class: 'axis', 'text-anchor': 'end'}, +n.toPrecision(3))]),
      withValue.length > 1 ? svg('polyline', {points: withValue.map((p) => `${x(p.t)},${y(p.m.Result)}`).join(' '), class: 'run-line'}) : null,
      ms.map((p) => (p.m.Result != null ?
        svg('circle', {cx: x(p.t), cy: y(p.m.Result), r: 5, class: `m-${p.m.Outcome}`}, svg('title', null, `${fmtTime(new Date(p.t))}: ${measurementText(p.m)} (${p.m.Outcome})`)) :
        svg('rect', {x: x(p.t) - 4, y: H - B - 8, width: 8, height: 8, class: 'm-error'}, svg('title', null, `${fmtTime(new Date(p.t))}: ${p.m.Error || p.m.Outcome}`)))),
      svg('text', {x: L, y: H - 8, class: 'axis', 'text-anchor': 'start'}, fmtTime(new Date(t0)).slice(11)),
      svg('text', {x: W - R, y: H - 8, class: 'axis', 'text-anchor': 'end'}, `+${fmtSecs(span)}`)));
}

// analysisPlots draws every run of every group, newest last.
function analysisPlots(vs) {
  const out = vs.flatMap((v) => (v.s.Analyses || []).map((r) => analysisPlot(v, r)));
  return out.length ? out : h('p', {class: 'muted'}, 'No analysis run.');
}

const VERBS = {
  promote: {label: 'Promote', path: 'promote', body: (id) => ({DeploymentID: id, All: true}),
    text: 'The canaries become part of the new version and the rest of the rollout goes on.'},
  pause: {label: 'Pause', path: 'pause', body: (id) => ({DeploymentID: id, Pause: true}),
    text: 'No new batch starts until the deployment is resumed; allocations in flight finish.'},
  resume: {label: 'Resume', path: 'pause', body: (id) => ({DeploymentID: id, Pause: false}),
    text: 'The rollout goes on from where it stopped.'},
  fail: {label: 'Fail', path: 'fail', body: (id) => ({DeploymentID: id}),
    text: 'The deployment ends as failed; a group with auto_revert registers the last stable version again.'},
};

function deploymentPage(id) {
  const st = {d: null, spec: null, specFor: null, depAllocs: null, jobAllocs: null, samples: [], watching: false};
  const result = $('dep-action-result');

  const views = () => {
    const d = st.d;
    return groupNames(d).map((g) => groupView(d, g, (st.spec?.TaskGroups || []).find((x) => x.Name === g), st.depAllocs || [], st.jobAllocs || []));
  };

  const sample = (vs) => {
    // Only once the deployment and both lists of allocations are in: a
    // sample of half the sources would dip.
    if (!st.d || !st.depAllocs || !st.jobAllocs) return;
    let old = 0;
    let fresh = 0;
    let count = 0;
    for (const v of vs) {
      old += v.oldServing;
      fresh += v.newHealthy;
      count += v.count;
    }
    const last = st.samples[st.samples.length - 1];
    const p = {t: Date.now(), old, fresh, count};
    if (last && last.old === old && last.fresh === fresh && last.count === count && st.samples.length > 1) {
      // Unchanged: the step goes on to now without a new point.
      return;
    }
    st.samples.push(p);
    if (st.samples.length > MAX_SAMPLES) st.samples.splice(0, st.samples.length - MAX_SAMPLES);
  };

  const renderActions = () => {
    const d = st.d;
    if (!d) return;
    const active = d.Status === 'running' || d.Status === 'paused';
    const may = canWrite(d.Namespace);
    const needsPromotion = Object.values(d.TaskGroups || {}).some((s) => s.DesiredCanaries > 0 && !s.Promoted && !(s.Order > 0 && s.State === 'waiting'));
    $('btn-promote').hidden = !(may && active && needsPromotion);
    $('btn-pause').hidden = !(may && d.Status === 'running');
    $('btn-resume').hidden = !(may && d.Status === 'paused');
    $('btn-fail').hidden = !(may && active);
  };

  const render = () => {
    const d = st.d;
    if (!d) return;
    const now = new Date();
    const vs = views();
    sample(vs);
    badge(d.Status, $('dep-status'));
    let healthy = 0;
    let count = 0;
    for (const v of vs) {
      healthy += v.newHealthy;
      count += v.count;
    }
    facts($('dep-facts'), [
      ['Job', jobLink(d.JobID, d.Namespace)], ['Version', String(d.JobVersion)], ['Namespace', d.Namespace],
      ['Description', d.StatusDescription, 'dep-description'],
      ['New healthy', `${healthy} of ${count}`, 'dep-healthy'],
      ['Started', fmtTime(d.CreateTime)],
      d.RevertOf != null ? ['Reverts to', `version ${d.RevertOf}`] : null,
      toDate(d.PausedAt) ? ['Paused at', fmtTime(d.PausedAt)] : null,
      toDate(d.ResumeAt) ? ['Resumes at', fmtTime(d.ResumeAt), 'dep-resume-at'] : null,
    ]);
    fill($('dep-waiting'), deploymentWaits(d, vs, now));
    renderActions();
    fill($('dep-groups'), vs.map((v) => groupCard(d, v, now)));
    fill($('dep-plot'), plot(st.samples, now.getTime()));
    fill($('dep-analyses'), analysisPlots(vs));
  };

  const startJobWatches = (d) => {
    if (st.watching) return;
    st.watching = true;
    const q = `namespace=${enc(d.Namespace)}`;
    watch(`/v1/deployment/allocations/${enc(id)}`, (list) => {
      st.depAllocs = list || [];
      render();
    });
    watch(`/v1/job/${enc(d.JobID)}/allocations?${q}`, (list) => {
      st.jobAllocs = list || [];
      render();
    }, (e) => e.status === 404);
  };

  const loadSpec = async (d) => {
    if (st.specFor === d.JobVersion) return;
    st.specFor = d.JobVersion;
    try {
      const {data} = await get(`/v1/job/${enc(d.JobID)}/versions?namespace=${enc(d.Namespace)}`);
      st.spec = (data?.Versions || []).find((v) => v.Version === d.JobVersion) || null;
      render();
    } catch {
      // the job is gone: the page shows the deployment's own figures
    }
  };

  watch(`/v1/deployment/${enc(id)}`, (d) => {
    st.d = d;
    document.title = `Deployment ${short(d.ID)} of ${d.JobID} · drover`;
    fill($('dep-short'), short(d.ID));
    startJobWatches(d);
    loadSpec(d);
    render();
  }, (e) => {
    if (e.status !== 404) return false;
    fill($('dep-facts'), h('p', {class: 'error'}, `No deployment ${id}.`));
    return true;
  });

  // Between answers the page still moves: countdowns, and the plot's
  // time axis.
  setInterval(() => {
    if (st.d && (st.d.Status === 'running' || st.d.Status === 'paused')) render();
  }, 1000);

  onSession(renderActions);

  for (const [verb, spec] of Object.entries(VERBS)) {
    const btn = $(`btn-${verb}`);
    btn.addEventListener('click', async () => {
      const d = st.d;
      if (!d) return;
      const ok = await confirmAction(`${spec.label} deployment ${short(d.ID)} of ${d.JobID}?`, spec.text, spec.label);
      if (!ok) return;
      btn.disabled = true;
      result.className = 'action-result';
      result.textContent = `${spec.label}…`;
      try {
        const {data} = await api('PUT', `/v1/deployment/${spec.path}/${enc(d.ID)}`, spec.body(d.ID));
        result.textContent = `${spec.label}: done${data?.EvalID ? ` (evaluation ${short(data.EvalID)})` : ''}.`;
      } catch (e) {
        result.className = 'action-result error';
        if (e.status === 403) {
          deny(d.Namespace);
          renderActions();
          result.textContent = `Your token may not change this deployment: ${e.message}`;
        } else {
          result.textContent = `${spec.label} refused: ${e.message}`;
        }
      } finally {
        btn.disabled = false;
      }
    });
  }
}

// deploymentWaits says what the deployment as a whole waits for: its
// description when it ended or is paused, and each held group's
// WaitReason, the watcher's own sentence.
function deploymentWaits(d, vs, now) {
  if (d.Status === 'successful') return h('p', {class: 'ok'}, 'Rollout complete: every group runs the new version, healthy.');
  if (d.Status === 'failed' || d.Status === 'cancelled') return h('p', {class: 'bad'}, d.StatusDescription);
  const held = vs.filter((v) => v.s.WaitReason);
  const lines = held.map((v) => h('p', {class: d.Status === 'paused' ? 'warn' : 'info', 'data-wait': v.name},
    vs.length > 1 ? `${v.name}: ` : '', v.s.WaitReason));
  if (d.Status === 'paused') {
    const r = toDate(d.ResumeAt);
    return [h('p', {class: 'warn'}, `${d.StatusDescription}. `, r ?
      `Resumes by itself at ${fmtTime(r)} (in ${fmtSecs((r - now) / 1000)}); Pause holds it, Resume goes on now.` :
      'Waits for Resume (or Fail).'), ...lines];
  }
  const ready = vs.filter((v) => v.s.DesiredCanaries > 0 && !v.s.Promoted && v.s.State !== 'waiting');
  if (ready.length && ready.every((v) => v.s.LiveHealthyCanaries >= v.s.DesiredCanaries) && ready.some((v) => !v.s.AutoPromote)) {
    return [h('p', {class: 'warn'}, 'Waits for promotion: the canaries are healthy. Promote goes on; Fail ends it.'), ...lines];
  }
  if (!lines.length) return h('p', {class: 'info'}, d.StatusDescription);
  return lines;
}

// ---- nodes ----

function nodesPage() {
  watch('/v1/nodes', (list) => {
    const nodes = (list || []).sort((a, b) => a.Name.localeCompare(b.Name));
    $('nodes-empty').hidden = nodes.length > 0;
    fill($('nodes'), nodes.map((n) => h('tr', {'data-node': n.ID},
      h('td', {class: 'mono', title: n.ID}, short(n.ID)), h('td', null, n.Name), h('td', null, n.Datacenter),
      h('td', null, n.NodePool), h('td', null, n.NodeClass || '—'), h('td', {class: 'mono'}, n.Address),
      h('td', null, badge(n.Status)), h('td', null, badge(n.SchedulingEligibility)), h('td', null, n.Drain ? badge('draining') : 'no'),
      h('td', null, n.Version),
      h('td', null, Object.entries(n.Drivers || {}).filter(([, dv]) => dv.Detected).map(([name, dv]) => h('span', {class: dv.Healthy ? 'driver' : 'driver bad', title: dv.HealthDescription}, name))))));
  });
}

// ---- an allocation ----

function allocPage(id) {
  let alloc = null;
  let stream = null;
  const taskSel = $('log-task');
  const logEl = $('log');
  const logState = $('log-state');

  const logType = () => document.querySelector('input[name="log-type"]:checked')?.value || 'stdout';

  // follow streams the tail of the chosen log and what the task writes
  // next (follow=true), until the task is dead or the choice changes.
  const follow = async () => {
    if (stream) stream.abort();
    const task = taskSel.value;
    if (!alloc || !task) return;
    const ctl = new AbortController();
    stream = ctl;
    logEl.textContent = '';
    logState.textContent = 'loading…';
    const path = withQuery(`/v1/client/fs/logs/${enc(id)}`, {task, type: logType(), origin: 'end', offset: LOG_TAIL, follow: 'true', plain: 'true', namespace: alloc.Namespace});
    try {
      const headers = token() ? {'X-Nomad-Token': token()} : {};
      const resp = await fetch(path, {headers, signal: ctl.signal, cache: 'no-store'});
      if (!resp.ok) throw new APIError(resp.status, (await resp.text()).trim(), path);
      logState.textContent = 'following';
      const reader = resp.body.getReader();
      const dec = new TextDecoder();
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        const stick = logEl.scrollTop + logEl.clientHeight >= logEl.scrollHeight - 4;
        let text = logEl.textContent + dec.decode(value, {stream: true});
        if (text.length > LOG_KEEP) text = text.slice(text.length - LOG_KEEP);
        logEl.textContent = text;
        if (stick) logEl.scrollTop = logEl.scrollHeight;
      }
      logState.textContent = 'the task has ended: this is all of it';
    } catch (e) {
      if (e.name === 'AbortError') return;
      logState.textContent = `cannot read the log: ${e.message}`;
    }
  };

  taskSel.addEventListener('change', follow);
  document.querySelectorAll('input[name="log-type"]').forEach((r) => r.addEventListener('change', follow));

  watch(`/v1/allocation/${enc(id)}`, (a) => {
    const first = !alloc;
    alloc = a;
    document.title = `Allocation ${short(a.ID)} (${a.Name}) · drover`;
    badge(a.ClientStatus, $('alloc-status'));
    facts($('alloc-facts'), [
      ['Name', a.Name], ['Job', jobLink(a.JobID, a.Namespace)], ['Job version', String(a.Job?.Version ?? a.JobVersion ?? '')],
      ['Group', a.TaskGroup], ['Node', a.NodeName || short(a.NodeID)],
      ['Deployment', a.DeploymentID ? depLink(a.DeploymentID) : '—'],
      ['Desired', `${a.DesiredStatus}${a.DesiredDescription ? ` (${a.DesiredDescription})` : ''}`],
      ['Client', `${a.ClientStatus}${a.ClientDescription ? ` (${a.ClientDescription})` : ''}`],
      ['Health', a.DeploymentStatus?.Healthy == null ? '—' : a.DeploymentStatus.Healthy ? 'healthy' : 'unhealthy'],
      a.DeploymentStatus?.Canary ? ['Canary', 'yes'] : null,
      ['Created', fmtTime(a.CreateTime)],
      a.NextAllocation ? ['Replaced by', allocLink(a.NextAllocation)] : null,
      a.PreviousAllocation ? ['Replaces', allocLink(a.PreviousAllocation)] : null,
    ]);
    const names = Object.keys(a.TaskStates || {}).sort();
    fill($('alloc-tasks'), names.map((t) => {
      const ts = a.TaskStates[t];
      return h('div', {class: 'task', 'data-task': t},
        h('h3', null, t, ' ', badge(ts.State), ts.Failed ? badge('failed') : '', ts.Restarts ? h('span', {class: 'muted'}, ` ${ts.Restarts} restarts`) : ''),
        h('p', {class: 'muted'}, ts.StartedAt && toDate(ts.StartedAt) ? `started ${fmtTime(ts.StartedAt)}` : '', toDate(ts.FinishedAt) ? `, finished ${fmtTime(ts.FinishedAt)}` : ''),
        h('table', {class: 'list compact events'},
          h('thead', null, h('tr', null, h('th', null, 'Time'), h('th', null, 'Type'), h('th', null, 'Description'))),
          h('tbody', null, (ts.Events || []).slice().reverse().map((e) => h('tr', null,
            h('td', null, fmtTime(e.Time)), h('td', null, e.Type), h('td', null, e.DisplayMessage || e.Message || ''))))));
    }));
    if (first) {
      const tasks = names.length ? names : (a.Job?.TaskGroups || []).find((g) => g.Name === a.TaskGroup)?.Tasks?.map((t) => t.Name) || [];
      fill(taskSel, tasks.map((t) => h('option', {value: t}, t)));
      follow();
    }
  }, (e) => {
    if (e.status !== 404) return false;
    fill($('alloc-facts'), h('p', {class: 'error'}, `No allocation ${id}.`));
    return true;
  });
}

// ---- start ----

function start() {
  const page = document.body.dataset.page;
  const id = document.body.dataset.id;
  document.querySelectorAll('[data-nav]').forEach((a) => {
    if (a.dataset.nav === page || (page === 'job' && a.dataset.nav === 'jobs')) a.classList.add('current');
  });
  initTokenForm(() => location.reload());
  whoami();
  const pages = {jobs: jobsPage, job: jobPage, deployment: deploymentPage, nodes: nodesPage, allocation: allocPage, tokens: tokensPage};
  pages[page]?.(id);
}

start();
