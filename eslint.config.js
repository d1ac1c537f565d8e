// One lint configuration for the whole tree. Type-aware rules catch floating promises everywhere;
// workflow files are additionally barred from Node built-ins, which break Temporal's determinism sandbox.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import path from 'node:path';

// What each part may import (top-level folders of the repository). The arrows run one way: entry points
// (cli, workers) on top, then activities, then client and storage, with the workflow-safe `pipeline`
// and the `contract` at the bottom. `typeOnly` lists parts a folder may name in `import type` alone.
const LAYERS = {
  contract: { may: [] },
  lib: { may: [] },
  config: { may: ['lib'] },
  pipeline: { may: ['contract'] },
  workflows: { may: ['pipeline', 'contract'], typeOnly: ['activities'] },
  client: { may: ['contract', 'lib'] },
  storage: { may: ['pipeline', 'contract', 'lib'], typeOnly: ['config'] },
  activities: { may: ['client', 'storage', 'pipeline', 'contract', 'lib'] },
  events: { may: ['client', 'storage', 'pipeline', 'contract', 'lib', 'config'] },
  jobs: { may: ['storage', 'pipeline', 'contract', 'lib'], typeOnly: ['workflows'] },
  sandbox: { may: ['contract', 'lib'] },
  stack: { may: ['lib', 'config'] },
  workers: {
    may: ['activities', 'client', 'storage', 'events', 'pipeline', 'contract', 'lib', 'config', 'sandbox'],
    typeOnly: ['workflows'],
  },
  cli: {
    may: [
      'workers',
      'jobs',
      'events',
      'client',
      'storage',
      'pipeline',
      'contract',
      'lib',
      'config',
      'stack',
      'sandbox',
      'workflows',
    ],
  },
};

/** Reports a relative import that crosses the layers above (an upward arrow). */
const layersRule = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const root = import.meta.dirname;
    const partOf = (file) => path.relative(root, file).split(path.sep)[0];
    const from = partOf(context.filename);
    const layer = LAYERS[from];
    if (!layer) return {};
    const check = (node) => {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const to = partOf(path.resolve(path.dirname(context.filename), source));
      if (to === from || layer.may.includes(to)) return;
      const typeOnly = node.importKind === 'type' || node.exportKind === 'type';
      if (typeOnly && layer.typeOnly?.includes(to)) return;
      context.report({
        node: node.source,
        message: `${from}/ may not import ${to}/ (${typeOnly ? 'not even types' : 'see LAYERS in eslint.config.js'}).`,
      });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.data/**', '.scratch/**', 'enrichflow-output/**'],
  },
  js.configs.recommended,
  { plugins: { enrichflow: { rules: { layers: layersRule } } }, rules: { 'enrichflow/layers': 'error' } },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  // Plain JS files (the bin shim, this config) are checked without type information.
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflow code must not import Node built-ins.',
          })),
          patterns: [
            {
              group: ['../activities/*', '../activities'],
              allowTypeImports: true,
              message: 'Workflows import activities as types only.',
            },
          ],
        },
      ],
    },
  },
);
