// The targets table both benches add to: `bench:app` and `bench:local-api` each append their
// rows to the file in KEYPOOL_BENCH_SUMMARY (one JSON object per line), and `npm run bench`
// prints them as one table once both ran. Without that variable, a bench prints its own rows.
//   node tests/bench/summary.mjs add JSON   reports the rows of a JSON array (for shell benches)
//   node tests/bench/summary.mjs print FILE prints the table of FILE
import { appendFileSync, readFileSync } from 'node:fs';

/** Adds rows `{ what, figure, goal, met }` (met: true, false, or null when there is no goal). */
export function report(rows) {
  const file = process.env.KEYPOOL_BENCH_SUMMARY;
  if (file) appendFileSync(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  else print(rows);
}

function print(rows) {
  const mark = (met) => (met === null ? '' : met ? 'yes' : '**no**');
  console.log('\n| what | measured | goal | met |\n|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.what} | ${row.figure} | ${row.goal ?? ''} | ${mark(row.met ?? null)} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, argument] = process.argv.slice(2);
  if (command === 'add') report(JSON.parse(argument));
  else if (command === 'print') print(readFileSync(argument, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)));
  else throw new Error('usage: summary.mjs add JSON | print FILE');
}
