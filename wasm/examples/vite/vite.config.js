// The package's browser entry instantiates the wasm with top-level await:
// the build target must allow it (Vite's default targets browsers of 2020).
// In `vite dev`, keep the package out of dependency pre-bundling so the
// .wasm URL stays next to the module.
export default {
  build: { target: 'es2022' },
  optimizeDeps: { exclude: ['chime-scheduler'] },
};
