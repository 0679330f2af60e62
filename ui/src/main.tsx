import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
// The shared styles first: each page's own CSS, imported by the page, comes after them and wins ties.
import './styles/base.css';
import './styles/controls.css';
import { App } from './app.tsx';

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
