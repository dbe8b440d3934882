export declare const BACKGROUND_NICE = 19;
export declare function lowerThreadPriority(nice?: number): boolean;
export declare function lowerProcessPriority(nice: number): boolean;
