// @ts-check
// A frame budget that follows the display's refresh interval, for pages whose frame is one
// requestAnimationFrame step (the wasm example page): there the frame time is the interval between
// two animation frames, which jitters around the refresh period (16.7 ms at 60 Hz, a little over
// about half the time), so a fixed 16.7 ms budget flagged about half of the normal frames. The
// budget is 1.5 refresh periods: a frame that kept up (one period, give or take the jitter) is under
// it; a frame that missed a refresh (two periods or more) is over it (amber), one that missed two
// or more is red (over twice the budget, three periods). The period is the median interval of the
// last REFRESH_WINDOW animation frames, so a slow frame does not move it and moving the page to
// another display does.

/** Animation-frame intervals the period is measured over. */
export const REFRESH_WINDOW = 60;
/** Intervals before the first estimate (half a second at 60 Hz: the page's start-up frames are slow). */
export const REFRESH_MIN_INTERVALS = 30;
/** The budget in refresh periods. */
export const BUDGET_PERIODS = 1.5;

/**
 * The refresh period (ms) from animation-frame intervals: their median, or NaN with fewer than 8.
 * @param {ArrayLike<number>} intervalsMs
 */
export function refreshPeriodMs(intervalsMs) {
  const v = Array.from(intervalsMs).filter((x) => x > 0 && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length < 8) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/**
 * The frame budget (ms, rounded to 0.1) for a refresh period.
 * @param {number} periodMs
 */
export function budgetForRefresh(periodMs) {
  return Math.round(periodMs * BUDGET_PERIODS * 10) / 10;
}

/**
 * Keeps `panel`'s budget at budgetForRefresh(the display's period), measured from `win`'s animation
 * frames; the budget is re-set when the period changes by more than 3%. `onChange(budgetMs, periodMs)`
 * is told each time. Returns a function that stops it.
 * @param {{setBudget: (ms: number) => void}} panel
 * @param {Pick<Window, 'requestAnimationFrame' | 'cancelAnimationFrame'>} win
 * @param {(budgetMs: number, periodMs: number) => void} [onChange]
 */
export function followRefreshRate(panel, win, onChange = () => {}) {
  const intervals = new Float64Array(REFRESH_WINDOW);
  let n = 0, last = NaN, period = NaN, id = 0;
  /** @param {number} t */
  const step = (t) => {
    id = win.requestAnimationFrame(step);
    if (Number.isFinite(last)) intervals[n++ % REFRESH_WINDOW] = t - last;
    last = t;
    if (n < REFRESH_MIN_INTERVALS || n % 8 !== 0) return;
    const p = refreshPeriodMs(intervals.subarray(0, Math.min(n, REFRESH_WINDOW)));
    if (Number.isFinite(p) && !(Math.abs(p - period) <= period * 0.03)) {
      period = p;
      const budget = budgetForRefresh(p);
      panel.setBudget(budget);
      onChange(budget, p);
    }
  };
  id = win.requestAnimationFrame(step);
  return () => win.cancelAnimationFrame(id);
}
