// Concurrent players over the last hour (one-minute samples plus "now") and events per type in the same
// hour, drawn with Chart.js. Charts are created once and updated in place on every poll. A chart with
// nothing to draw says "no data yet" instead of drawing an empty 0–1 axis.
import { useEffect, useRef } from 'preact/hooks';
import { Chart, registerables } from 'chart.js';
import { html } from './html.js';
import { api } from './api.js';
import { usePoll } from './poll.js';

Chart.register(...registerables);

/** A Chart.js chart on a canvas, rebuilt when `type` changes and updated when `data` does. */
function ChartCanvas({ type, data, options, test }) {
  const canvas = useRef(null);
  const chart = useRef(null);
  useEffect(() => {
    chart.current = new Chart(canvas.current, { type, data, options: { animation: false, maintainAspectRatio: false, ...options } });
    return () => chart.current.destroy();
  }, [type]);
  useEffect(() => {
    if (!chart.current) return;
    chart.current.data = data;
    chart.current.update('none');
  }, [data]);
  return html`<div class="chart"><canvas ref=${canvas} data-test=${test}></canvas></div>`;
}

function NoData({ test }) {
  return html`<div class="chart no-data" data-test=${test}><p>no data yet</p></div>`;
}

export function Charts({ gameId }) {
  const { data, error } = usePoll(() => api(`/games/${gameId}/charts`), 15000, gameId);
  if (!data) return html`<p class="empty">${error ? error.message : 'Loading charts…'}</p>`;
  // The API always appends a point for "now"; with no samples and nobody online there is nothing to draw.
  const hasPlayers = data.concurrency.some((p) => p.players > 0 || p.servers > 0);
  const labels = data.concurrency.map((p) => new Date(p.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false }));
  const players = {
    labels,
    datasets: [
      { label: 'players', data: data.concurrency.map((p) => p.players), borderColor: '#2563eb', backgroundColor: 'rgba(37,99,235,0.15)', fill: true, tension: 0.2 },
      { label: 'servers', data: data.concurrency.map((p) => p.servers), borderColor: '#9333ea', yAxisID: 'y1', tension: 0.2 },
    ],
  };
  const events = {
    labels: data.eventsByType.map((e) => e.type),
    datasets: [{ label: 'events, last hour', data: data.eventsByType.map((e) => e.count), backgroundColor: '#0d9488' }],
  };
  return html`
    <div class="charts" data-test="charts">
      <section>
        <h3>Concurrent players, last hour</h3>
        ${hasPlayers
          ? html`<${ChartCanvas} type="line" data=${players} test="chart-players"
              options=${{ scales: { y: { beginAtZero: true, title: { display: true, text: 'players' } }, y1: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: 'servers' } } } }} />`
          : html`<${NoData} test="chart-players-empty" />`}
      </section>
      <section>
        <h3>Events per type, last hour</h3>
        ${data.eventsByType.length
          ? html`<${ChartCanvas} type="bar" data=${events} test="chart-events" options=${{ indexAxis: 'y', plugins: { legend: { display: false } } }} />`
          : html`<${NoData} test="chart-events-empty" />`}
      </section>
    </div>`;
}
