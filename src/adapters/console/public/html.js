// Preact + htm: components are plain functions returning html`...` tagged templates (no build step).
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
