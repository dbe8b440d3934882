export declare const BACKGROUND_NICE = 10;
export declare function lowerThreadPriority(nice?: number): boolean;
