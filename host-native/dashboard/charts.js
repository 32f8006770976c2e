// Charts as inline SVG, drawn from numbers only (no library).
import { h, s, iso } from './dom.js';

const COLORS = ['#0b57d0', '#b3261e', '#146c2e', '#8a5300', '#6d28d9', '#0e7490', '#9d174d', '#374151'];
const W = 520;
const H = 170;
const PAD = { l: 44, r: 8, t: 8, b: 22 };

function niceMax(v) {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

/**
 * A line chart: series = [{name, points: [[ms, value], …]}]. Returns a
 * <figure> with the SVG (role img, labelled) and a legend.
 */
export function lineChart(title, series, unit = '') {
  const all = series.flatMap((x) => x.points);
  const fig = h('figure', { class: 'card chart' }, h('figcaption', {}, h('strong', {}, title)));
  if (all.length === 0) {
    fig.append(h('p', { class: 'muted' }, 'No samples yet.'));
    return fig;
  }
  const t0 = Math.min(...all.map((p) => p[0]));
  const t1 = Math.max(t0 + 1, ...all.map((p) => p[0]));
  const vmax = niceMax(Math.max(...all.map((p) => p[1])));
  const x = (t) => PAD.l + ((t - t0) / (t1 - t0)) * (W - PAD.l - PAD.r);
  const y = (v) => H - PAD.b - (v / vmax) * (H - PAD.t - PAD.b);
  const last = series.map((x) => `${x.name} ${x.points.at(-1)?.[1] ?? 0}${unit}`).join(', ');
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': `${title}: latest ${last}` });
  for (const f of [0, 0.5, 1]) {
    svg.append(s('line', { class: 'grid', x1: PAD.l, x2: W - PAD.r, y1: y(vmax * f), y2: y(vmax * f) }));
    svg.append(s('text', { x: PAD.l - 4, y: y(vmax * f) + 4, 'text-anchor': 'end' }, `${+(vmax * f).toPrecision(3)}${unit}`));
  }
  svg.append(s('line', { class: 'axis', x1: PAD.l, x2: W - PAD.r, y1: H - PAD.b, y2: H - PAD.b }));
  svg.append(s('text', { x: PAD.l, y: H - 6 }, iso(t0).slice(11, 16)));
  svg.append(s('text', { x: W - PAD.r, y: H - 6, 'text-anchor': 'end' }, iso(t1).slice(11, 16)));
  series.forEach((ser, i) => {
    if (ser.points.length === 0) return;
    const d = ser.points.map((p, j) => `${j ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' ');
    svg.append(s('path', { d, fill: 'none', stroke: COLORS[i % COLORS.length], 'stroke-width': 2 }));
  });
  fig.append(svg);
  fig.append(h('p', { class: 'legend' }, series.map((ser, i) => [
    h('span', { class: 'swatch', 'aria-hidden': 'true' }, s('svg', { width: 12, height: 12 }, s('rect', { width: 12, height: 12, fill: COLORS[i % COLORS.length] }))),
    ` ${ser.name} `,
  ])));
  return fig;
}

const NOTES = { shiftedFromGap: 'shifted out of the spring-forward gap', firstPass: 'repeated hour, first pass', secondPass: 'repeated hour, second pass' };
export const noteText = (n) => (n ? NOTES[n] ?? n : '');

function offset(sec) {
  const sign = sec < 0 ? '-' : '+';
  const a = Math.abs(sec);
  return `${sign}${String(Math.floor(a / 3600)).padStart(2, '0')}:${String(Math.floor((a % 3600) / 60)).padStart(2, '0')}`;
}
export { offset };

/**
 * The next fires on a timeline: one tick per fire, DST ones marked (and
 * labelled with their note), the offset change drawn where it happens.
 */
export function timeline(fires) {
  if (fires.length === 0) return h('p', { class: 'muted' }, 'No upcoming fires.');
  const t0 = fires[0].at;
  const t1 = Math.max(t0 + 1, fires.at(-1).at);
  const w = 900;
  const hh = 90;
  const x = (t) => 20 + ((t - t0) / (t1 - t0)) * (w - 40);
  const dst = fires.filter((f) => f.note).length;
  const svg = s('svg', { viewBox: `0 0 ${w} ${hh}`, width: '100%', role: 'img', class: 'timeline', 'aria-label': `Timeline of ${fires.length} fires, ${dst} with a DST note` });
  svg.append(s('line', { class: 'axis', x1: 10, x2: w - 10, y1: 50, y2: 50 }));
  fires.forEach((f, i) => {
    const prev = fires[i - 1];
    if (prev && prev.offsetSeconds !== f.offsetSeconds) {
      const xm = (x(prev.at) + x(f.at)) / 2;
      svg.append(s('line', { class: 'transition-line', x1: xm, x2: xm, y1: 15, y2: 75, stroke: '#8a5300', 'stroke-dasharray': '4 3' }));
      svg.append(s('text', { class: 'transition', x: xm + 3, y: 14 }, `${offset(prev.offsetSeconds)} → ${offset(f.offsetSeconds)}`));
    }
    svg.append(s('circle', { class: f.note ? 'tick dst' : 'tick', cx: x(f.at), cy: 50, r: f.note ? 6 : 4, 'data-at': f.at },
      s('title', {}, `${f.civil} (${offset(f.offsetSeconds)})${f.note ? ' — ' + noteText(f.note) : ''}`)));
  });
  svg.append(s('text', { x: 10, y: 86 }, fires[0].civil));
  svg.append(s('text', { x: w - 10, y: 86, 'text-anchor': 'end' }, fires.at(-1).civil));
  return svg;
}
