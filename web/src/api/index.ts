// The API: the HTTP client, the generated types and one module per resource.
export * from './client';
export * from './types';
export * as strategies from './strategies';
export * as backtests from './backtests';
export * as results from './results';
export * as data from './data';
export * as accounts from './accounts';
export * as studies from './studies';
