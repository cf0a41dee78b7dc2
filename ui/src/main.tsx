import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { handedFonts } from './firstScreen';
import { applyChosenFonts } from './fonts';
import './styles.css';
import { markStartup } from './startupMarks';

// Every module the first screen imports has run by now.
markStartup('script');

// Before the first render, so its style and layout look up only fonts the machine has.
applyChosenFonts(document.documentElement, handedFonts());

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root to render into');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
