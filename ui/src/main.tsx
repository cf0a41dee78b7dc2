import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { markDesktop } from './desktop';
import './styles.css';
import { markStartup } from './startupMarks';

// Every module the first screen imports has run by now.
markStartup('script');

// Before the first render: the stylesheet's font stack depends on it.
markDesktop(document.documentElement, navigator.userAgent);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root to render into');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
