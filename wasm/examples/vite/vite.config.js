// The package's browser entry instantiates the wasm with top-level await:
// the build target must allow it (Vite's default targets browsers of 2020).
export default {
  build: { target: 'es2022' },
};
