// The API's shapes, generated from api/openapi.yaml into schema.d.ts (`npm run gen:api`;
// a test fails when the file is stale). Views use these names, never hand-written copies.
import type { components } from './schema';

type S = components['schemas'];

export type Strategy = S['Strategy'];
export type StrategyUpload = S['StrategyUpload'];
export type StrategyVersion = S['StrategyVersion'];
export type ParamInfo = S['ParamInfo'];
export type Template = S['Template'];
export type TaskStatus = S['TaskStatus'];
export type BacktestRequest = S['BacktestRequest'];
export type Task = S['Task'];
export type Attempt = NonNullable<Task['attempts']>[number];
export type Progress = S['Progress'];
export type LogLine = S['LogLine'];
export type Summary = S['Summary'];
export type ChartConfig = S['ChartConfig'];
export type DataSource = S['DataSource'];
export type SymbolInfo = S['Symbol'];
export type Bar = S['Bar'];
export type Comparison = S['Comparison'];
export type SymbolResult = S['SymbolResult'];
export type DrawdownPeriod = S['DrawdownPeriod'];
export type RoundTrip = S['RoundTrip'];
export type Fill = S['Trade'];
export type Me = S['Me'];
export type User = S['User'];
export type Token = S['Token'];
export type CreatedToken = S['CreatedToken'];
export type AuditEntry = S['AuditEntry'];
export type StudyRequest = S['StudyRequest'];
export type Study = S['Study'];
export type StudyBoard = S['StudyBoard'];
export type StudyTrial = S['StudyTrial'];
export type Overfitting = S['Overfitting'];
export type WalkForward = S['WalkForward'];
export type WalkForwardFold = S['WalkForwardFold'];
