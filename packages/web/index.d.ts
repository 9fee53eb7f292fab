/** Absolute path of the built UI (`dist/`, holding `index.html` and `assets/`). */
export declare const webDistDir: string;
